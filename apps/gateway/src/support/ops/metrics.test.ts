/** The MCP servers' faults on /metrics: read from their connections' status at each scrape. */
import { describe, expect, it } from 'vitest';
import { createHeraldMetrics, type McpServerFaults } from './metrics.js';

function sample(text: string, name: string, server: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{server="${server}"} `));
  return line === undefined ? null : Number(line.split(' ').at(-1));
}

describe('MCP server metrics', () => {
  it('show each server up or down, with its crashes and restarts, as they are at the scrape', async () => {
    const metrics = createHeraldMetrics({ defaultMetrics: false });
    const servers: McpServerFaults[] = [
      { name: 'files', state: 'ready', crashes: 0, restarts: 0 },
      { name: 'web', state: 'backoff', crashes: 1, restarts: 0 },
    ];
    metrics.setSources({ mcpServers: () => servers });
    let text = (await metrics.render()).body;
    expect(text).toContain('# TYPE herald_mcp_server_crashes_total counter');
    expect(text).toContain('# TYPE herald_mcp_server_restarts_total counter');
    expect([sample(text, 'herald_mcp_server_up', 'files'), sample(text, 'herald_mcp_server_up', 'web')]).toEqual([1, 0]);
    expect(sample(text, 'herald_mcp_server_crashes_total', 'web')).toBe(1);
    expect(sample(text, 'herald_mcp_server_crashes_total', 'files')).toBe(0);

    // The restart worked: up again, the crash still counted, the restart too.
    servers[1] = { name: 'web', state: 'ready', crashes: 1, restarts: 1 };
    text = (await metrics.render()).body;
    expect(sample(text, 'herald_mcp_server_up', 'web')).toBe(1);
    expect(sample(text, 'herald_mcp_server_crashes_total', 'web')).toBe(1);
    expect(sample(text, 'herald_mcp_server_restarts_total', 'web')).toBe(1);
  });
});
