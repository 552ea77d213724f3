/**
 * MCP tool servers end to end: an ingress and two workers (each starts its own stdio server and opens its own
 * session to the HTTP one), the Telegram stand-in for users and the OpenAI stand-in scripted to call MCP tools;
 * then one `all` process on the Anthropic stand-in, and one on a model without vision. The LLM stand-ins refuse tool
 * schemas (and images) the real APIs refuse, so a turn that completes proves they were passed on in a shape each
 * accepts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imagesOf, startFakeAnthropic, startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { PIXEL_PNG_BASE64, startHttpMcpServer, stdioServer, type HttpMcpServer } from './fakes/mcp/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { metric } from './helpers/metrics.js';
import { waitFor } from './helpers/ports.js';
import { CONSOLE_COOKIE, sessionCookieValue } from '../apps/gateway/src/edges/console/auth.js';

const WEB_TOKEN = 'mcp-web-token-7f3a9c';
const ADMIN_TOKEN = 'mcp-admin-token-0123456789';

interface WireMessage {
  role: string;
  /** Text, or (the user message that shows the images tools returned) a list of parts. */
  content: string | null | Array<{ type: string; text?: string }>;
}
interface McpHealth {
  name: string;
  state: string;
  tools: number;
  error: string | null;
  failures: number;
  crashes: number;
  restarts: number;
  last_error: string | null;
  last_error_at: string | null;
}
interface DetailedHealth {
  mcp_servers: McpHealth[];
  workers: Array<{ id: string; pid: number; mcp_servers: McpHealth[] }>;
}

let tg: TelegramFake;
let llm: FakeLLM;
let web: HttpMcpServer;
let cluster: Cluster;

type Script = (step: number, req: RecordedRequest) => Step;
const scripts = new Map<string, Script>();
const messagesOf = (req: RecordedRequest): WireMessage[] => (req.body.messages ?? []) as WireMessage[];
const openAIToolNames = (req: RecordedRequest): string[] => ((req.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
/** The user's own text messages (not the ones that show the images tools returned). */
const isTurnStart = (m: WireMessage): boolean => m.role === 'user' && typeof m.content === 'string';
const turnStart = (req: RecordedRequest): number => messagesOf(req).findLastIndex(isTurnStart);
const turnText = (req: RecordedRequest): string => String(messagesOf(req)[turnStart(req)]?.content ?? '');
function stepOf(req: RecordedRequest): number {
  return messagesOf(req)
    .slice(turnStart(req) + 1)
    .filter((m) => m.role === 'assistant').length;
}
/** This turn's tool results (after the user's message). */
function toolResults(req: RecordedRequest): string[] {
  return messagesOf(req)
    .slice(turnStart(req) + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content ?? ''));
}
const requestsFor = (tag: string): RecordedRequest[] => llm.requests.filter((r) => turnText(r).startsWith(`${tag} `));
const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: JSON.stringify(args) });
/** A script that calls `tools` in its first step and then reports their results. */
const calling =
  (...tools: Array<ReturnType<typeof call>>): Script =>
  (step, req) =>
    step === 0 ? { toolCalls: tools } : { text: `results: ${toolResults(req).join(' | ')}` };

async function say(chatId: number, text: string, telegram = tg): Promise<string> {
  const before = repliesIn(telegram, chatId).length;
  telegram.injectMessage({ chatId, userId: chatId, text });
  const replies = await waitFor(() => (repliesIn(telegram, chatId).length > before ? repliesIn(telegram, chatId) : null), {
    timeoutMs: 30_000,
    what: `a reply to "${text}"`,
  });
  return replies[before];
}

async function health(gw: GatewayProcess): Promise<DetailedHealth> {
  return (await (await fetch(`${gw.url}/health/detailed`)).json()) as DetailedHealth;
}

const logsOf = (gw: GatewayProcess) => gw.logs();
const readyLines = (gw: GatewayProcess, server: string): number =>
  logsOf(gw).filter((l) => l.msg === `mcp server ${server} ready` || String(l.msg).startsWith(`mcp server ${server} ready `)).length;

beforeAll(async () => {
  tg = await startTelegramFake();
  llm = await startFakeOpenAI();
  llm.respondWith((req) => {
    const script = scripts.get(turnText(req).split(/\s+/)[0]);
    return script ? script(stepOf(req), req) : { text: `ok: ${turnText(req)}` };
  });
  web = await startHttpMcpServer(WEB_TOKEN);
  const servers = {
    local: { ...stdioServer('local'), deny: ['secret_admin'], env: { TEST_GREETING: 'hi from herald.yaml' } },
    web: { url: web.url, headers: { Authorization: 'Bearer ${MCP_WEB_TOKEN}' }, allow: ['echo', 'grow', 'extra', 'whoami'] },
    broken: { command: '/nonexistent/mcp-server', args: ['--serve'] },
  };
  cluster = await startCluster({ workers: 2, env: telegramEnv(tg, llm, { HERALD_MCP_SERVERS: JSON.stringify(servers), MCP_WEB_TOKEN: WEB_TOKEN }) });
  // Each worker discovers its tools before it takes its first turn.
  for (const w of cluster.workers) await w.waitForLog((l) => String(l.msg).startsWith('mcp server web ready'), 'the web server on every worker');
});

afterAll(async () => {
  await cluster?.stop();
  await web?.kill();
  await llm?.close();
  await tg?.close();
});

describe('MCP tools through the real gateway (ingress + 2 workers, OpenAI)', () => {
  it("offers every server's tools as server__tool with schemas OpenAI accepts, and runs them on stdio and HTTP", async () => {
    scripts.set('both', calling(call('local__echo', { text: 'one' }), call('web__echo', { text: 'two' }), call('local__whoami')));
    const reply = await say(9101, 'both use the tools');
    expect(reply).toBe('results: local echo: one | http echo: two | {"label":"local","greeting":"hi from herald.yaml","inheritedBotToken":false}');
    const names = openAIToolNames(requestsFor('both')[0]);
    expect(names).toEqual(expect.arrayContaining(['local__echo', 'local__picture', 'web__echo', 'web__grow']));
    expect(names).not.toContain('local__secret_admin');
    expect(names).not.toContain('web__picture');
    // The dotted tool with a schema OpenAI refuses as it is: renamed, repaired, and accepted by the stand-in.
    expect(names.some((n) => /^local__lookup_v2_[0-9a-f]{6}$/.test(n))).toBe(true);
  });

  it('an image reaches the model in a user message right after the tool results, naming the call; resources come as text', async () => {
    scripts.set('media', calling(call('local__picture'), call('local__document')));
    const reply = await say(9102, 'media show me');
    expect(reply).toContain('a red dot\n\n[image 1: image/png, 70 bytes; shown with this result only, not kept in the conversation history]');
    expect(reply).toContain('[resource <file:///notes.txt> (text/plain)]\nMeeting at noon');
    // The request after the tools ran, as the OpenAI SDK sent it: two tool messages, then the picture as a user's image.
    const after = requestsFor('media')[1];
    const messages = messagesOf(after);
    expect(messages.slice(-3).map((m) => m.role)).toEqual(['tool', 'tool', 'user']);
    const pictureCall = (messages.at(-4) as unknown as { tool_calls: Array<{ id: string; function: { name: string } }> }).tool_calls.find(
      (c) => c.function.name === 'local__picture',
    );
    expect(messages.at(-1)?.content).toEqual([
      { type: 'text', text: `The image returned by tool call ${pictureCall?.id} (local__picture), in the order its result lists them:` },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG_BASE64}` } },
    ]);
    expect(imagesOf(after)).toEqual([
      { messageIndex: messages.length - 1, role: 'user', mimeType: 'image/png', bytes: Buffer.from(PIXEL_PNG_BASE64, 'base64') },
    ]);
    // The next turn reads the stored history: the note, no image.
    scripts.set('later', (_step, req) => ({ text: `images now: ${imagesOf(req).length}` }));
    expect(await say(9102, 'later what was it?')).toBe('images now: 0');
    expect(JSON.stringify(messagesOf(requestsFor('later')[0]))).toContain('[image 1: image/png, 70 bytes; shown with this result only');
  });

  it('a server that crashes in the middle of a call: the agent gets a tool error, the turn is answered, the server comes back', async () => {
    scripts.set('crash', calling(call('local__crash')));
    const reply = await say(9103, 'crash the server');
    expect(reply).toMatch(
      /^results: Error: local__crash failed: MCP server "local" closed the connection during the call \(stderr: crash tool: exiting in the middle of a call\); Herald restarts it\.$/,
    );
    // The worker that ran the turn restarts its server (with backoff) and says so; the gateway never went down.
    const worker = cluster.workers.find((w) => logsOf(w).some((l) => String(l.msg).startsWith('mcp server local down')));
    expect(worker).toBeDefined();
    await worker!.waitForLog(() => readyLines(worker!, 'local') >= 2, 'the restarted stdio server');
    scripts.set('after', calling(call('local__echo', { text: 'back again' })));
    expect(await say(9103, 'after the crash')).toBe('results: local echo: back again');
  });

  it('tools/list_changed reaches every worker: the new tool is offered in the next turn', async () => {
    scripts.set('grow', calling(call('web__grow')));
    expect(await say(9104, 'grow the list')).toBe('results: grown');
    for (const w of cluster.workers) {
      await w.waitForLog((l) => String(l.msg).startsWith('mcp server web tools') && JSON.stringify(l.tools).includes('web__extra'), 'the refreshed list');
    }
    scripts.set('extra', calling(call('web__extra')));
    expect(await say(9104, 'extra please')).toBe('results: extra tool ran');
    expect(openAIToolNames(requestsFor('extra')[0])).toContain('web__extra');
  });

  it("/health/detailed shows each worker's servers (and none on the ingress); the failing one with why; no token in any log", async () => {
    const h = await health(cluster.ingress);
    expect(h.mcp_servers).toEqual([]);
    expect(h.workers).toHaveLength(2);
    for (const w of h.workers) {
      const byName = Object.fromEntries(w.mcp_servers.map((s) => [s.name, s]));
      expect(byName.web).toMatchObject({ state: 'ready', error: null });
      expect(byName.local.state).toMatch(/^(ready|connecting|backoff)$/);
      expect(byName.broken).toMatchObject({ state: 'backoff', tools: 0 });
      expect(byName.broken.error).toMatch(/^could not start: .*ENOENT/);
      expect(byName.broken.failures).toBeGreaterThanOrEqual(1);
    }
    // A worker's own endpoint says the same about itself.
    const own = await health(cluster.workers[0]);
    expect(own.mcp_servers.map((s) => s.name).sort()).toEqual(['broken', 'local', 'web']);
    for (const gw of [cluster.ingress, ...cluster.workers]) expect(gw.output.join('\n')).not.toContain(WEB_TOKEN);
  });
});

describe('an MCP server killed from outside', () => {
  it('is restarted, and /health/detailed, /metrics and the console still show the crash once it is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-mcp-kill-'));
    const pidFile = join(dir, 'pid');
    const { telegram, gw } = await singleGateway({
      HERALD_MODEL: 'openai:gpt-4.1-mini',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: llm.url,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      HERALD_MCP_SERVERS: JSON.stringify({ local: { ...stdioServer('victim'), env: { TEST_MCP_PID_FILE: pidFile } } }),
    });
    const detailed = async (): Promise<DetailedHealth> => {
      const res = await fetch(`${gw.url}/health/detailed`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as DetailedHealth;
    };
    try {
      expect((await detailed()).mcp_servers).toEqual([
        expect.objectContaining({ name: 'local', state: 'ready', crashes: 0, restarts: 0, last_error: null, last_error_at: null }),
      ]);
      const first = Number(readFileSync(pidFile, 'utf8'));
      const killedAt = Date.now();
      process.kill(first, 'SIGKILL');

      // Back up (a new process), with the crash on record: what a `failures: 0, error: null` alone would hide.
      const local = await waitFor(
        async () => {
          const s = (await detailed()).mcp_servers.find((m) => m.name === 'local');
          return s && s.state === 'ready' && s.crashes > 0 ? s : null;
        },
        { timeoutMs: 30_000, what: 'the killed server restarted' },
      );
      expect(Number(readFileSync(pidFile, 'utf8'))).not.toBe(first);
      expect(local).toMatchObject({ state: 'ready', error: null, failures: 0, crashes: 1 });
      expect(local.restarts).toBeGreaterThanOrEqual(1);
      expect(local.last_error).toMatch(/^the connection closed/);
      expect(Date.parse(local.last_error_at ?? '')).toBeGreaterThanOrEqual(killedAt - 1_000);

      expect(await metric(gw, 'herald_mcp_server_crashes_total', { server: 'local' })).toBe(1);
      expect(await metric(gw, 'herald_mcp_server_restarts_total', { server: 'local' })).toBe(local.restarts);
      expect(await metric(gw, 'herald_mcp_server_up', { server: 'local' })).toBe(1);

      const overview = await fetch(`${gw.url}/console`, { headers: { cookie: `${CONSOLE_COOKIE}=${sessionCookieValue(ADMIN_TOKEN)}` } });
      expect(overview.status).toBe(200);
      expect(await overview.text()).toMatch(
        new RegExp(
          `<th scope="row">local</th><td>this process \\(pid ${gw.proc.pid}\\)</td><td class="state ok">ready</td><td class="num">1</td><td class="num">${local.restarts}</td><td>the connection closed`,
        ),
      );
    } finally {
      await gw.stop();
      await telegram.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('MCP tools on the Anthropic API', () => {
  it('passes the tools as Anthropic tools (schemas repaired) and returns their results, an image inside its tool_result', async () => {
    const anthropic = await startFakeAnthropic();
    const { telegram, gw } = await singleGateway({
      HERALD_MODEL: 'anthropic:claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.url,
    });
    try {
      anthropic.respondWith((req) => {
        const results = anthropicToolResults(req);
        return results.length > 0
          ? { text: `done: ${results.join(' | ')}` }
          : { toolCalls: [{ name: toolName(req, /^local__lookup_v2_/), arguments: '{"tags":["a"]}' }] };
      });
      expect(await say(9201, 'look it up', telegram)).toBe('done: looked up {"tags":["a"]}');
      const tools = (anthropic.requests[0].body.tools ?? []) as Array<{ name: string; input_schema: Record<string, unknown> }>;
      const lookup = tools.find((t) => t.name.startsWith('local__lookup_v2_'));
      expect(lookup?.input_schema).toEqual({
        type: 'object',
        properties: { id: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, tags: { type: 'array', items: {} } },
      });

      // An image comes back inside the tool_result, after its text, as the @anthropic-ai/sdk sent it.
      anthropic.respondWith((req) => {
        const results = anthropicToolResults(req);
        return results.length > 0 ? { text: `seen: ${imagesOf(req).length}` } : { toolCalls: [{ id: 'toolu_pic', name: 'local__picture', arguments: '{}' }] };
      });
      const before = anthropic.requests.length;
      expect(await say(9202, 'show the picture', telegram)).toBe('seen: 1');
      const withImage = anthropic.requests[before + 1];
      expect(imagesOf(withImage)).toMatchObject([
        { role: 'user', mimeType: 'image/png', toolUseId: 'toolu_pic', bytes: Buffer.from(PIXEL_PNG_BASE64, 'base64') },
      ]);
      expect(anthropicToolResults(withImage)).toEqual([
        'a red dot\n\n[image 1: image/png, 70 bytes; shown with this result only, not kept in the conversation history]',
        '',
      ]);
    } finally {
      await gw.stop();
      await anthropic.close();
      await telegram.close();
    }
  });
});

describe('MCP images for a model without vision', () => {
  it('the tool result says the image was not shown, and no image is sent', async () => {
    // The cluster's OpenAI stand-in, a model the table knows has no vision.
    const { telegram, gw } = await singleGateway({ HERALD_MODEL: 'openai:gpt-3.5-turbo', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: llm.url });
    try {
      scripts.set('blind', calling(call('local__picture')));
      const reply = await say(9301, 'blind show me', telegram);
      expect(reply).toBe(
        'results: a red dot\n\n[image 1: image/png, 70 bytes; shown with this result only, not kept in the conversation history]\n\n[image returned by tool local__picture, not shown: model has no vision]',
      );
      expect(requestsFor('blind').map((r) => imagesOf(r).length)).toEqual([0, 0]);
    } finally {
      await gw.stop();
      await telegram.close();
    }
  });
});

/** One `all` process with the stdio test server, on a Telegram stand-in of its own (the cluster polls the other). */
async function singleGateway(model: Record<string, string>): Promise<{ telegram: TelegramFake; gw: GatewayProcess }> {
  const telegram = await startTelegramFake();
  const gw = await startGateway({
    env: {
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.url,
      GATEWAY_ALLOW_ALL_USERS: 'true',
      HERALD_MCP_SERVERS: JSON.stringify({ local: stdioServer('single') }),
      ...model,
    },
  });
  await gw.waitForLog((l) => String(l.msg).startsWith('mcp server local ready'), 'the stdio server');
  return { telegram, gw };
}

/** The texts of the tool_result blocks in an Anthropic request. */
function anthropicToolResults(req: RecordedRequest): string[] {
  const messages = (req.body.messages ?? []) as Array<{ content: unknown }>;
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content.flatMap((b: { type?: string; content?: unknown }) => {
          if (b.type !== 'tool_result') return [];
          if (typeof b.content === 'string') return [b.content];
          return Array.isArray(b.content) ? b.content.map((c: { text?: string }) => c.text ?? '') : [];
        })
      : [],
  );
}

function toolName(req: RecordedRequest, pattern: RegExp): string {
  const tools = (req.body.tools ?? []) as Array<{ name: string }>;
  const found = tools.find((t) => pattern.test(t.name));
  if (!found) throw new Error(`no tool matching ${pattern}`);
  return found.name;
}
