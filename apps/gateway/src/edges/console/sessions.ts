/**
 * Sessions: the newest first (filter by source, page with a cursor), or full-text search over every transcript
 * (the store's FTS search, the same as /admin/search and `herald sessions search`).
 */
import type { SearchHit, SessionOverview } from '@herald/agent-core';
import { SOURCES } from '../admin/schemas.js';
import { escapeHtml, html, trusted, type Html } from './html.js';
import { CONSOLE_PATH } from './auth.js';
import { costHtml, priceHint, type Priced } from './costs.js';
import { count, tableWrap, usd, when } from './layout.js';
import { ago, sessionLabel, shortId, userHtml } from './session-label.js';

export interface SessionsView {
  q: string;
  source: string;
  sessions: SessionOverview[];
  hits: SearchHit[] | null;
  /** The sessions of the search hits, by id (read in one query). */
  hitSessions: ReadonlyMap<string, SessionOverview>;
  nextCursor: string | null;
  searchError: string | null;
  /** Which models have a price (costs.ts). */
  priced: Priced;
  /** When the page is rendered (for "5 min ago"). */
  now: number;
}

export function sessionLink(s: { id: string }, text: string): Html {
  return html`<a href="${CONSOLE_PATH}/sessions/${encodeURIComponent(s.id)}">${text}</a>`;
}

/** A search snippet with the store's `>>>hit<<<` marks as <mark>, everything else escaped. */
export function snippetHtml(snippet: string): Html {
  return trusted(
    escapeHtml(snippet)
      .replace(/&gt;&gt;&gt;/g, '<mark>')
      .replace(/&lt;&lt;&lt;/g, '</mark>'),
  );
}

export function sessionsBody(v: SessionsView): Html {
  const form = html`<form method="get" action="${CONSOLE_PATH}/sessions" role="search" aria-label="Sessions">
  <div class="row">
    <div class="field"><label for="q">Search transcripts</label><input id="q" name="q" type="search" value="${v.q}" placeholder="words, &quot;a phrase&quot;, prefix*"></div>
    <div class="field"><label for="source">Source</label>
      <select id="source" name="source"><option value="">all</option>${SOURCES.map((s) => html`<option${s === v.source ? html` selected` : ''}>${s}</option>`)}</select></div>
    <div class="field"><button type="submit">Show</button></div>
  </div>
</form>`;
  if (v.searchError) return html`${form}<p class="notice error" role="alert">${v.searchError}</p>`;
  if (v.hits) {
    return html`${form}${tableWrap(
      `${v.hits.length} matches for “${v.q}”, best first`,
      ['Session', 'Source', 'User', 'Role', 'Match', 'When'],
      v.hits.map((h) => hitRow(h, v.hitSessions.get(h.sessionId))),
      `Nothing matches “${v.q}”.`,
    )}`;
  }
  const next = v.nextCursor
    ? html`<p><a href="${CONSOLE_PATH}/sessions?${new URLSearchParams({ ...(v.source && { source: v.source }), cursor: v.nextCursor }).toString()}">Older sessions</a></p>`
    : '';
  return html`${form}${tableWrap(
    'Sessions, newest first',
    ['Session', 'Source', 'User', 'Last activity', 'Started', 'Messages', 'Tokens', 'Cost', 'State'],
    v.sessions.map((s) => sessionRow(s, v.priced, v.now)),
    'No sessions yet.',
  )}${priceHint(
    v.sessions.map((s) => s.model),
    v.priced,
  )}${next}`;
}

/** One search hit, under the name of its session (and who it is with) as the list shows them. */
function hitRow(h: SearchHit, s: SessionOverview | undefined): Html {
  const label = s ? sessionLabel(s) : (h.title ?? `Session ${shortId(h.sessionId)}`);
  return html`<tr><th scope="row">${sessionLink({ id: h.sessionId }, label)}</th><td>${h.source}</td><td>${s ? userHtml(s) : '—'}</td><td>${h.role}</td><td>${snippetHtml(h.snippet)}</td><td>${when(h.createdAt)}</td></tr>`;
}

/** One session: its name (title, API name or first message) over its short id, who, when, how much. */
function sessionRow(s: SessionOverview, priced: Priced, now: number): Html {
  const label = sessionLabel(s);
  const id = label.includes(shortId(s.id)) ? '' : html`<br><span class="muted">${shortId(s.id)}</span>`;
  return html`<tr>
<th scope="row">${sessionLink(s, label)}${id}</th><td>${s.source}</td><td>${userHtml(s)}</td>
<td>${ago(Math.max(s.lastActivityAt, s.lastActive), now)}</td><td>${when(s.startedAt)}</td>
<td class="num">${count(s.messageCount)}</td><td class="num">${count(s.totalTokens)}</td><td class="num">${costHtml(s.estimatedCostUsd, s.model, priced)}${reportedCost(s)}</td>
<td>${s.endedAt === null ? 'open' : `ended (${s.endReason ?? '—'})`}</td></tr>`;
}

/** The cost the provider reported itself (sessions.actual_cost_usd), under the estimate, when there is one. */
function reportedCost(s: SessionOverview): Html | '' {
  return s.actualCostUsd === null ? '' : html`<br><span class="muted">billed ${usd(s.actualCostUsd)}</span>`;
}
