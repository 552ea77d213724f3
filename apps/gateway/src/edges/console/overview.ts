/**
 * The overview: is everything up (platforms, workers, MCP servers, Redis, the database), how deep is the queue right now (kept
 * live by the page's script), and what the last week cost.
 */
import type { DetailedHealth } from '../admin/health-detailed.js';
import { html, type Html } from './html.js';
import { CONSOLE_PATH } from './auth.js';
import { priceHint, type Priced } from './costs.js';
import { count, tableWrap, usd, when } from './layout.js';
import { mcpSection } from './mcp-servers.js';

export interface Dependency {
  name: string;
  error: string | null;
}

/** The last week's spend and the models it was spent on (those without a price count $0). */
export interface WeekSpend {
  costUsd: number;
  sessions: number;
  models: Array<string | null>;
}

export const LIVE_QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

function stateClass(state: string): string {
  return state === 'connected' ? 'ok' : state === 'disabled' ? 'off' : 'bad';
}

/**
 * Whether this process answers /v1 right now, and how to turn it on when it does not: a worker never serves it (the
 * ingress processes do), any other process does once HERALD_API_KEYS holds a key.
 */
export function apiStateHtml(served: boolean, role: string): Html {
  if (served) {
    return html`<p><span class="state ok">On</span> — this process answers the OpenAI-compatible API at <code>/v1</code> (keys from HERALD_API_KEYS). Its sessions are listed with source <code>api</code>, by the name each client gives (the X-Herald-Session header, else <code>user</code>).</p>`;
  }
  if (role === 'worker') {
    return html`<p><span class="state off">Off in this process</span> — a worker (<code>--role worker</code>) runs turns only; <code>/v1</code> is answered by the ingress processes (<code>--role all</code> or <code>ingress</code>) when HERALD_API_KEYS is set there.</p>`;
  }
  return html`<p><span class="state off">Off</span> — to turn it on, set HERALD_API_KEYS to a comma list of keys (16 characters or more each) and restart Herald; clients then call <code>/v1</code> with <code>Authorization: Bearer &lt;key&gt;</code>.</p>`;
}

export function overviewBody(health: DetailedHealth, deps: Dependency[], week: WeekSpend, api: Html, priced: Priced): Html {
  const queue = health.queue ?? {};
  const depth = LIVE_QUEUE_STATES.map(
    (s) => html`<div class="card"><h3 id="q-${s}">${s}</h3><p class="big" aria-labelledby="q-${s}" data-state="${s}">${queue[s] ?? '—'}</p></div>`,
  );
  return html`
<section aria-labelledby="h-deps">
  <h2 id="h-deps">Dependencies</h2>
  <div class="cards">
    ${deps.map((d) => html`<div class="card"><h3>${d.name}</h3><p class="state ${d.error ? 'bad' : 'ok'}">${d.error ? 'down' : 'up'}</p>${d.error ? html`<p class="muted">${d.error}</p>` : ''}</div>`)}
    <div class="card"><h3>Workers</h3><p class="state ${health.workers.length > 0 ? 'ok' : 'bad'}">${health.workers.length} seen</p><p class="muted">${health.active_turns} turns running</p></div>
  </div>
</section>
<section aria-labelledby="h-queue">
  <h2 id="h-queue">Queue depth</h2>
  <div data-live-queue="${CONSOLE_PATH}/queue.json">
    <p class="notice error" role="status" data-paused${health.queue_paused === true ? '' : html` hidden`}>Paused: messages wait in the queue and no turn starts until it is resumed (Resume in the <a href="/admin/queues">queue dashboard</a>).</p>
    <div class="cards">${depth}</div>
    <p class="muted">Updated <span data-updated>${new Date().toISOString().slice(11, 19)} UTC</span>, every 2 s while this page is open.${health.queue_error ? html` Redis: ${health.queue_error}` : ''}</p>
  </div>
</section>
<section aria-labelledby="h-platforms">
  <h2 id="h-platforms">Platforms</h2>
  ${tableWrap(
    'Platform connections (of this process)',
    ['Platform', 'State', 'Last event', 'Error'],
    Object.entries(health.platforms).map(
      ([name, p]) =>
        html`<tr><th scope="row">${name}</th><td class="state ${stateClass(p.state)}">${p.state}</td><td>${when(p.last_event_at)}</td><td>${p.error ?? ''}</td></tr>`,
    ),
    'No platform.',
  )}
</section>
<section aria-labelledby="h-api">
  <h2 id="h-api">OpenAI-compatible API</h2>
  ${api}
</section>
<section aria-labelledby="h-workers">
  <h2 id="h-workers">Workers</h2>
  ${tableWrap(
    'Workers heard from in the last 30 s',
    ['Worker', 'Host', 'PID', 'Last heartbeat', 'Running turns'],
    health.workers.map(
      (w) =>
        html`<tr><th scope="row">${w.id}</th><td>${w.host}</td><td class="num">${w.pid}</td><td>${when(w.last_heartbeat_at)}</td><td class="num">${w.running_turns}</td></tr>`,
    ),
    health.workers_error
      ? `Workers could not be listed: ${health.workers_error}`
      : 'No worker has sent a heartbeat: messages wait in the queue until one runs.',
  )}
</section>
${mcpSection(health)}
<section aria-labelledby="h-spend">
  <h2 id="h-spend">Last 7 days</h2>
  <p><span class="big">${usd(week.costUsd)}</span> estimated spend over ${count(week.sessions)} sessions. <a href="${CONSOLE_PATH}/usage">Usage by model and day</a></p>
  ${priceHint(week.models, priced)}
</section>
<p class="muted">Herald ${health.version} · this process: ${health.role}, pid ${health.pid}, up ${health.uptime_s} s.</p>`;
}
