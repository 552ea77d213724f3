/**
 * The MCP client against real MCP servers built with the same SDK (test/fakes/mcp): stdio children and a
 * Streamable HTTP server in a child process, including crashes, freezes and a tool list that changes.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TOOL_RESULT_CHARS, toToolOutput, truncateResult, type Tool, type ToolOutput } from '@herald/agent-core';
import {
  BIG_RESULT_CHARS,
  LARGE_PNG_BASE64,
  PIXEL_PNG_BASE64,
  startHttpMcpServer,
  stdioServer,
  type HttpMcpServer,
} from '../../../../../test/fakes/mcp/index.js';
import { waitFor } from '../../../../../test/helpers/ports.js';
import { mcpServersSchema, type McpServerConfig } from '../../support/config/mcp.js';
import { McpHub } from './hub.js';
import { McpToolError, type McpResultLimits } from './result.js';

const log = pino({ level: 'silent' });
const FAST_BACKOFF = { initialMs: 50, maxMs: 200 };
/** The media defaults (HERALD_MEDIA_MAX_*). */
const LIMITS: McpResultLimits = { maxImageBytes: 5_000_000, maxImages: 10, maxMessageBytes: 50_000_000, maxChars: 40_000 };
const hubs: McpHub[] = [];
const httpServers: HttpMcpServer[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  await Promise.all(httpServers.splice(0).map((s) => s.kill()));
});

function servers(raw: Record<string, unknown>): McpServerConfig[] {
  return mcpServersSchema.parse(raw);
}

async function hub(raw: Record<string, unknown>, backoff = FAST_BACKOFF, limits = LIMITS): Promise<McpHub> {
  const h = new McpHub(servers(raw), { log, backoff, limits });
  hubs.push(h);
  await h.start();
  return h;
}

const signal = (): AbortSignal => new AbortController().signal;
function tool(h: McpHub, name: string): Tool {
  const found = h.toolsFor('default').find((t) => t.name === name);
  if (!found)
    throw new Error(
      `no tool ${name}; have ${h
        .toolsFor('default')
        .map((t) => t.name)
        .join(', ')}`,
    );
  return found;
}
const output = async (h: McpHub, name: string, args: Record<string, unknown> = {}): Promise<ToolOutput> =>
  toToolOutput(await tool(h, name).execute(args, { signal: signal() }));
/** The text of a call (for tools that return no images). */
const run = async (h: McpHub, name: string, args: Record<string, unknown> = {}): Promise<string> => {
  const out = await output(h, name, args);
  expect(out.images).toBeUndefined();
  return out.content;
};
const stateOf = (h: McpHub, server: string) => h.status().find((s) => s.name === server);

describe('MCP over stdio', () => {
  it('discovers the tools as server__tool (minus the denied ones) with schemas both providers accept, and calls them', async () => {
    const h = await hub({ files: { ...stdioServer('files'), deny: ['secret_admin'], env: { TEST_GREETING: 'hello from the config' } } });
    expect(stateOf(h, 'files')).toMatchObject({ state: 'ready', transport: 'stdio', error: null, failures: 0 });
    const names = h.toolsFor('default').map((t) => t.name);
    expect(names).toContain('files__echo');
    expect(names).not.toContain('files__secret_admin');
    // A dotted MCP name is made valid and kept apart from a plain one by a short hash.
    const lookup = names.find((n) => n.startsWith('files__lookup_v2_'));
    expect(lookup).toMatch(/^files__lookup_v2_[0-9a-f]{6}$/);
    expect(tool(h, lookup!).parameters).toEqual({
      type: 'object',
      properties: { id: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, tags: { type: 'array', items: {} } },
    });
    expect(tool(h, 'files__echo').readOnly).toBe(true);
    expect(tool(h, 'files__picture').readOnly).toBe(false);

    expect(await run(h, 'files__echo', { text: 'hi' })).toBe('files echo: hi');
    expect(await run(h, lookup!, { id: 7 })).toBe('looked up {"id":7}');
    // The configured environment reaches the server; the gateway's own secrets do not.
    process.env.TELEGRAM_BOT_TOKEN ??= '1:not-for-mcp-servers';
    expect(JSON.parse(await run(h, 'files__whoami'))).toEqual({ label: 'files', greeting: 'hello from the config', inheritedBotToken: false });
  });

  it("passes images on with a note in the text that names each, reports error results as tool errors, and leaves long results to the loop's limit", async () => {
    const h = await hub({ docs: stdioServer('docs') });
    expect(await output(h, 'docs__picture')).toEqual({
      content: 'a red dot\n\n[image 1: image/png, 70 bytes; shown with this result only, not kept in the conversation history]',
      images: [{ mimeType: 'image/png', data: PIXEL_PNG_BASE64, name: 'image 1' }],
    });
    expect(await run(h, 'docs__document')).toBe(
      [
        '[resource <file:///notes.txt> (text/plain)]\nMeeting at noon',
        '[resource <file:///logo.bin>: application/octet-stream, 70 bytes; not shown to the model]',
        '[resource link: big.csv <file:///big.csv> (text/csv, 2.0 KB)]',
      ].join('\n\n'),
    );
    await expect(run(h, 'docs__fail')).rejects.toThrow(
      new McpToolError('the disk is full\n\n[image 1: image/png, 70 bytes; not shown: the tool reported an error]'),
    );
    const big = await run(h, 'docs__big');
    expect(big).toHaveLength(BIG_RESULT_CHARS);
    expect(truncateResult(big)).toMatch(new RegExp(`^x{${MAX_TOOL_RESULT_CHARS}}\\n\\n\\[truncated: ${BIG_RESULT_CHARS - MAX_TOOL_RESULT_CHARS} more`));
  });

  it('holds images to the media limits: the type by the bytes, the per-image cap, images per result; over a cap, a note', async () => {
    const kept = (n: number, size: string): string => `[image ${n}: image/png, ${size}; shown with this result only, not kept in the conversation history]`;
    const svg = '[image 4: image/svg+xml, 41 bytes; not shown: not a JPEG, PNG, GIF or WebP image]';
    const h = await hub({ docs: stdioServer('docs') });
    // The defaults take the mislabelled one as what its bytes are, and the larger one; never the SVG.
    const all = await output(h, 'docs__gallery');
    expect(all.content).toBe(['the gallery', kept(1, '70 bytes'), kept(2, '70 bytes'), kept(3, '2.0 KB'), svg].join('\n\n'));
    expect(all.images?.map((i) => i.mimeType)).toEqual(['image/png', 'image/png', 'image/png']);
    expect(all.images?.[2].data).toBe(LARGE_PNG_BASE64);

    const tight = await hub({ tight: stdioServer('tight') }, FAST_BACKOFF, { ...LIMITS, maxImageBytes: 1_024, maxImages: 2 });
    const capped = await output(tight, 'tight__gallery');
    expect(capped.content).toBe(
      [
        'the gallery',
        kept(1, '70 bytes'),
        kept(2, '70 bytes'),
        '[image 3: image/png, 2.0 KB; not shown: only 2 images are shown per tool result]',
        '[image 4: image/svg+xml, 41 bytes; not shown: only 2 images are shown per tool result]',
      ].join('\n\n'),
    );
    expect(capped.images).toHaveLength(2);
    const bySize = await hub({ small: stdioServer('small') }, FAST_BACKOFF, { ...LIMITS, maxImageBytes: 1_024, maxMessageBytes: 100 });
    expect((await output(bySize, 'small__gallery')).content).toBe(
      [
        'the gallery',
        kept(1, '70 bytes'),
        "[image 2: image/jpeg, 70 bytes; not shown: the result's images together pass the 100 bytes limit]",
        '[image 3: image/png, 2.0 KB; not shown: larger than the 1.0 KB limit per image]',
        "[image 4: image/svg+xml, 41 bytes; not shown: the result's images together pass the 100 bytes limit]",
      ].join('\n\n'),
    );
    // An embedded text resource is held to the media character limit.
    const short = await hub({ short: stdioServer('short') }, FAST_BACKOFF, { ...LIMITS, maxChars: 7 });
    expect((await run(short, 'short__document')).split('\n\n')[0]).toBe(
      '[resource <file:///notes.txt> (text/plain)]\nMeeting\n[cut: 8 more characters of this resource not shown]',
    );
  });

  it('a server that exits in the middle of a call: the call fails with the reason, the server is restarted and works again', async () => {
    // A backoff long enough that the test sees the server down before the restart.
    const h = await hub({ flaky: stdioServer('flaky') }, { initialMs: 1_500, maxMs: 1_500 });
    await expect(run(h, 'flaky__crash')).rejects.toThrow(
      /MCP server "flaky" closed the connection during the call \(stderr: crash tool: exiting in the middle of a call\); Herald restarts it/,
    );
    // Marked down before the call's error came back, with why; a call meanwhile fails at once instead of hanging.
    expect(stateOf(h, 'flaky')).toMatchObject({ state: 'backoff', failures: 1 });
    expect(stateOf(h, 'flaky')?.error).toMatch(/^the connection closed/);
    await expect(run(h, 'flaky__echo', { text: 'x' })).rejects.toThrow(
      /^MCP server "flaky" is not available \(down: the connection closed.*\)\. Herald restarts it in [12] s\.$/,
    );
    await waitFor(() => stateOf(h, 'flaky')?.state === 'ready', { what: 'the restarted server' });
    expect(await run(h, 'flaky__echo', { text: 'again' })).toBe('flaky echo: again');
    expect(stateOf(h, 'flaky')).toMatchObject({ state: 'ready', error: null, failures: 0 });
    // Back and well, yet the crash is still on record: counted, restarted once, the reason kept with its time.
    const after = stateOf(h, 'flaky')!;
    expect(after).toMatchObject({ crashes: 1, restarts: 1 });
    expect(after.lastError).toMatch(/^the connection closed \(stderr: crash tool: exiting in the middle of a call\)$/);
    expect(after.lastErrorAt).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a server that stops answering: the call times out, a ping does too, and the server is restarted', async () => {
    const h = await hub({ frozen: { ...stdioServer('frozen'), timeout_ms: 1_000 } });
    await expect(run(h, 'frozen__freeze')).rejects.toThrow('MCP server "frozen" did not answer within 1000 ms.');
    await waitFor(() => stateOf(h, 'frozen')?.failures === 1, { what: 'the failed ping' });
    expect(stateOf(h, 'frozen')?.error).toMatch(/a call took longer than 1000 ms, and a ping got no answer/);
    await waitFor(() => stateOf(h, 'frozen')?.state === 'ready', { timeoutMs: 20_000, what: 'the restarted server' });
    expect(await run(h, 'frozen__echo', { text: 'thawed' })).toBe('frozen echo: thawed');
  });

  it('a slow call is cancelled with the turn, and the server stays up', async () => {
    const h = await hub({ slow: stdioServer('slow') });
    const controller = new AbortController();
    const call = tool(h, 'slow__hang').execute({}, { signal: controller.signal });
    controller.abort(new Error('interrupted'));
    await expect(call).rejects.toThrow();
    expect(await run(h, 'slow__echo', { text: 'still here' })).toBe('slow echo: still here');
    expect(stateOf(h, 'slow')?.state).toBe('ready');
  });

  it('picks up tools/list_changed: a tool the server adds is offered from then on', async () => {
    const h = await hub({ live: stdioServer('live') });
    expect(h.toolsFor('default').map((t) => t.name)).not.toContain('live__extra');
    expect(await run(h, 'live__grow')).toBe('grown');
    await waitFor(() => h.toolsFor('default').some((t) => t.name === 'live__extra'), { what: 'the refreshed tool list' });
    expect(await run(h, 'live__extra')).toBe('extra tool ran');
  });

  it('a server that cannot start: no tools, health says why, and it is tried again with backoff while the others work', async () => {
    const h = await hub({ broken: { command: '/nonexistent/mcp-server' }, good: { ...stdioServer('good'), allow: ['echo'] } });
    expect(h.toolsFor('default').map((t) => t.name)).toEqual(['good__echo']);
    // Backing off, or (the backoff here is 50 ms) already trying again; either way with the last failure's reason.
    expect(stateOf(h, 'broken')).toMatchObject({ state: expect.stringMatching(/^(backoff|connecting)$/), tools: 0 });
    expect(stateOf(h, 'broken')?.error).toMatch(/^could not start: .*ENOENT/);
    await waitFor(() => (stateOf(h, 'broken')?.failures ?? 0) >= 3, { what: 'more attempts' });
    // Never up, so never crashed; each new attempt is a restart.
    expect(stateOf(h, 'broken')).toMatchObject({ crashes: 0, restarts: expect.any(Number) });
    expect(stateOf(h, 'broken')!.restarts).toBeGreaterThanOrEqual(2);
    expect(stateOf(h, 'broken')!.lastError).toMatch(/^could not start: .*ENOENT/);
    expect(await run(h, 'good__echo', { text: 'fine' })).toBe('good echo: fine');
  });

  it("offers only servers whose profiles include the agent's, and none that are disabled", async () => {
    const h = await hub({ on: stdioServer('on'), off: { ...stdioServer('off'), enabled: false } });
    expect(h.status().map((s) => s.name)).toEqual(['on']);
    expect(h.toolsFor('default').every((t) => t.name.startsWith('on__'))).toBe(true);
    expect(h.toolsFor('research')).toEqual([]);
  });
});

describe('MCP over Streamable HTTP', () => {
  it('sends the configured headers; a wrong token fails to start, with the status in the reason', async () => {
    const srv = await startHttpMcpServer('right-token-123');
    httpServers.push(srv);
    // A backoff long enough that the failed server is still waiting when it is looked at.
    const h = await hub(
      {
        web: { url: srv.url, headers: { Authorization: 'Bearer right-token-123' } },
        nope: { url: srv.url, headers: { Authorization: 'Bearer wrong-token-456' } },
      },
      { initialMs: 600_000, maxMs: 600_000 },
    );
    expect(stateOf(h, 'web')).toMatchObject({ state: 'ready', transport: 'http' });
    expect(await run(h, 'web__echo', { text: 'over http' })).toBe('http echo: over http');
    expect(stateOf(h, 'nope')?.state).toBe('backoff');
    expect(stateOf(h, 'nope')?.error).toMatch(/could not start: HTTP 401: .*invalid_token/);
  });

  it('a server killed in the middle of a call: the call fails, and the client reconnects once it is back', async () => {
    let srv = await startHttpMcpServer('tok-abcdef');
    httpServers.push(srv);
    const h = await hub({ remote: { url: srv.url, headers: { Authorization: 'Bearer tok-abcdef' }, timeout_ms: 5_000 } });
    const failed = expect(run(h, 'remote__hang')).rejects.toThrow(/MCP server "remote"/);
    await srv.kill();
    await failed;
    await waitFor(() => stateOf(h, 'remote')?.state !== 'ready', { what: 'the server marked down' });
    srv = await srv.restart();
    httpServers.push(srv);
    await waitFor(() => stateOf(h, 'remote')?.state === 'ready', { timeoutMs: 20_000, what: 'the reconnected server' });
    expect(await run(h, 'remote__echo', { text: 'back' })).toBe('http echo: back');
  });

  it('two workers, two sessions: a tool list change reaches both over their notification streams', async () => {
    const srv = await startHttpMcpServer('shared-token-1');
    httpServers.push(srv);
    const config = { web: { url: srv.url, headers: { Authorization: 'Bearer shared-token-1' } } };
    const [a, b] = [await hub(config), await hub(config)];
    expect(await run(a, 'web__grow')).toBe('grown');
    for (const h of [a, b]) await waitFor(() => h.toolsFor('default').some((t) => t.name === 'web__extra'), { what: 'the refreshed list' });
    expect(await run(b, 'web__extra')).toBe('extra tool ran');
  });
});
