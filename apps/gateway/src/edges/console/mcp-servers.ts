/**
 * The overview's MCP section: every MCP server of this process and of the other workers heard from, with its state
 * now and its faults since its process started (crashes, restarts, the last error and when) — what /health/detailed
 * says, so a crash that was followed by a good restart still shows.
 */
import type { DetailedHealth, McpServerJson } from '../admin/health-detailed.js';
import { html, type Html } from './html.js';
import { tableWrap, when } from './layout.js';

function stateClass(state: string): string {
  return state === 'ready' ? 'ok' : state === 'stopped' ? 'off' : 'bad';
}

function row(where: string, s: McpServerJson): Html {
  const last = s.last_error === null ? html`—` : html`${s.last_error} <span class="muted">(${when(s.last_error_at)})</span>`;
  return html`<tr><th scope="row">${s.name}</th><td>${where}</td><td class="state ${stateClass(s.state)}">${s.state}</td><td class="num">${s.crashes}</td><td class="num">${s.restarts}</td><td>${last}</td></tr>`;
}

export function mcpSection(health: DetailedHealth): Html {
  const own = health.mcp_servers.map((s) => row(`this process (pid ${health.pid})`, s));
  // This process's own heartbeat (role all or worker) lists the same servers: shown once, from the live status.
  const others = health.workers.filter((w) => w.pid !== health.pid).flatMap((w) => w.mcp_servers.map((s) => row(w.id, s)));
  return html`<section aria-labelledby="h-mcp">
  <h2 id="h-mcp">MCP servers</h2>
  ${tableWrap(
    'MCP servers, with their faults since their process started',
    ['Server', 'Process', 'State', 'Crashes', 'Restarts', 'Last error'],
    [...own, ...others],
    'No MCP server: none is configured (HERALD_MCP_SERVERS), or no worker that runs one was heard from.',
  )}
</section>`;
}
