/**
 * One session: its facts and its transcript. Tool calls, tool results and reasoning are folded (<details>), so
 * the conversation reads as the user saw it and the machinery opens on demand — with the keyboard too.
 */
import type { SessionOverview, StoredMessage } from '@herald/agent-core';
import { html, type Html } from './html.js';
import { CONSOLE_PATH } from './auth.js';
import { costHtml, priceHint, type Priced } from './costs.js';
import { count, when } from './layout.js';
import { ago, apiSessionName, userHtml } from './session-label.js';
import { sessionLink } from './sessions.js';

/** Tool arguments as indented JSON when they are JSON, else as sent. */
function prettyArgs(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

function messageHtml(m: StoredMessage): Html {
  const calls = (m.toolCalls ?? []).map(
    (c) => html`<details class="tool-call"><summary>Tool call: ${c.function.name}</summary><pre>${prettyArgs(c.function.arguments)}</pre></details>`,
  );
  const reasoning = m.reasoning ? html`<details><summary>Reasoning</summary><pre>${m.reasoning}</pre></details>` : '';
  const body =
    m.role === 'tool'
      ? html`<details class="tool-result"><summary>Tool result: ${m.toolName ?? 'tool'}</summary><pre>${m.content ?? ''}</pre></details>`
      : m.content
        ? html`<p class="text">${m.content}</p>`
        : '';
  return html`<article class="msg ${m.role}" aria-label="${m.role} message ${m.id}">
<h2>${m.role} · ${when(m.createdAt)}</h2>
${reasoning}${body}${calls}
</article>`;
}

export function transcriptBody(s: SessionOverview, messages: StoredMessage[], later: number | null, priced: Priced, now: number): Html {
  const name = apiSessionName(s);
  const more = later === null ? '' : html`<p><a href="${CONSOLE_PATH}/sessions/${encodeURIComponent(s.id)}?after=${later}">Later messages</a></p>`;
  return html`
<dl class="facts">
  <dt>Id</dt><dd>${s.id}</dd>
  <dt>Key</dt><dd>${s.key}</dd>
  <dt>Source</dt><dd>${s.source}</dd>
  ${name !== null ? html`<dt>API session name</dt><dd>${name}</dd>` : ''}
  <dt>User</dt><dd>${userHtml(s)}</dd>
  <dt>Model</dt><dd>${s.model ?? '—'}</dd>
  <dt>Started</dt><dd>${when(s.startedAt)}</dd>
  <dt>Last activity</dt><dd>${ago(s.lastActivityAt, now)}</dd>
  <dt>State</dt><dd>${s.endedAt === null ? 'open' : html`ended ${when(s.endedAt)} (${s.endReason ?? '—'})`}</dd>
  <dt>Tokens</dt><dd>${count(s.inputTokens)} in, ${count(s.outputTokens)} out, ${count(s.cacheReadTokens)} cache read</dd>
  <dt>Estimated cost</dt><dd>${costHtml(s.estimatedCostUsd, s.model, priced)}</dd>
  ${s.parentSessionId ? html`<dt>Continues</dt><dd>${sessionLink({ id: s.parentSessionId }, s.parentSessionId)}</dd>` : ''}
</dl>
${priceHint([s.model], priced)}
<section aria-labelledby="h-transcript">
<h2 id="h-transcript">Transcript (${count(s.messageCount)} messages)</h2>
${messages.length === 0 ? html`<p class="empty">No messages.</p>` : html`<div class="transcript">${messages.map(messageHtml)}</div>`}
${more}
</section>`;
}
