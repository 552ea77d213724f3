/**
 * The console's pages through fastify's inject: sessions told apart, "price unknown", the API's real state and the
 * HTML 404, on a real SQLite store.
 */
import { Queue } from 'bullmq';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '@herald/agent-core';
import { useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import type { DetailedHealth, McpServerJson } from '../admin/health-detailed.js';
import { PriceTable } from '../../features/budgets/prices.js';
import { createLogger } from '../../support/logger.js';
import { PairingService } from '../../features/pairing/index.js';
import { ApprovalAudit } from '../../features/approvals/audit.js';
import { CONSOLE_COOKIE, sessionCookieValue } from './auth.js';
import { consoleRoutes } from './routes.js';
import { ProfileTable } from '../../features/profiles/table.js';
import { openKnowledge } from '../../features/prompt/knowledge.js';
import { loadConfig } from '../../support/config/load.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';

const TOKEN = 'console-admin-token-0123456789';
const COOKIE = { cookie: `${CONSOLE_COOKIE}=${sessionCookieValue(TOKEN)}` };
const temp = useTempStores('sqlite');
const queues: Queue[] = [];
afterAll(async () => {
  // The queue's keys go with it (a test leaves no Redis key behind: test/global-setup.ts checks the run's prefix).
  for (const q of queues) {
    await q.obliterate({ force: true });
    await q.close();
  }
});

function health(role: string, mcp: McpServerJson[] = [], paused = false): DetailedHealth {
  return {
    status: 'ok',
    version: 'test',
    pid: 1,
    role,
    uptime_s: 1,
    platforms: {},
    workers: [],
    workers_error: null,
    queue: null,
    queue_paused: paused,
    queue_error: null,
    active_turns: 0,
    mcp_servers: mcp,
    sandbox: null,
    key_pools: null,
    key_pools_error: null,
    context_windows: null,
    context_windows_error: null,
    safety: [],
  };
}

async function consoleApp(store: SessionStore, opts: { role?: string; api?: boolean; mcp?: McpServerJson[]; paused?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify();
  const queue = new Queue('console-test', {
    connection: { url: 'redis://127.0.0.1:6379', maxRetriesPerRequest: null },
    prefix: testPrefix('console'),
  });
  queues.push(queue);
  // What edges/api/routes.ts mounts when HERALD_API_KEYS is set.
  if (opts.api) app.post('/v1/chat/completions', async () => ({}));
  await consoleRoutes(app, {
    token: TOKEN,
    store,
    queue,
    pairing: new PairingService(store.sql),
    approvals: new ApprovalAudit(store.sql),
    log: createLogger({ level: 'silent' }),
    health: async () => health(opts.role ?? 'all', opts.mcp, opts.paused),
    dependencies: [],
    prices: new PriceTable({}),
    profiles: new ProfileTable(loadConfig({ env: {}, file: null })),
    knowledge: openKnowledge(loadConfig({ env: {}, file: null }), store.sql, createLogger({ level: 'silent' })),
  });
  return app;
}

describe('console pages', () => {
  it('lists each profile’s skills and shows one, escaped', async () => {
    const store = await temp.open();
    const { skills } = openKnowledge(loadConfig({ env: {}, file: null }), store.sql, createLogger({ level: 'silent' }));
    await skills.writeSkill('default', 'tea-brewing', '---\nname: tea-brewing\ndescription: How to brew <tea>.\n---\nSteep 4 minutes.\n');
    const app = await consoleApp(store);
    const list = await app.inject({ url: '/console/skills', headers: COOKIE });
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(
      '<a href="/console/skills/default/tea-brewing">tea-brewing</a></th><td>How to brew &lt;tea&gt;.</td><td>written by the agent</td>',
    );
    const one = await app.inject({ url: '/console/skills/default/tea-brewing', headers: COOKIE });
    expect(one.body).toContain('<pre>Steep 4 minutes.</pre>');
    expect((await app.inject({ url: '/console/skills/default/nope', headers: COOKIE })).statusCode).toBe(404);
  });

  it('lists the approval decisions, newest first, arguments as masked, linked to their session', async () => {
    const store = await temp.open();
    const app = await consoleApp(store);
    const empty = await app.inject({ url: '/console/approvals', headers: COOKIE });
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('No tool call has needed approval yet.');
    expect(empty.body).toContain('aria-current="page"');
    const audit = new ApprovalAudit(store.sql);
    const subject = {
      requestId: 'r1',
      sessionId: 'sess-1',
      sessionKey: 'agent:main:telegram:dm:42',
      platform: 'telegram',
      chatId: '42',
      tool: 'tickets__delete',
      args: '{"id":7,"token":"[redacted]"}',
      askedBy: '42',
      askedAt: Date.now(),
    };
    await audit.record(subject, 'denied', 'telegram:42');
    await audit.record({ ...subject, requestId: 'r2', tool: 'execute_code' }, 'timed_out', 'timeout');
    const body = (await app.inject({ url: '/console/approvals', headers: COOKIE })).body;
    expect(body.indexOf('execute_code')).toBeLessThan(body.indexOf('tickets__delete'));
    expect(body).toContain('<code>{&quot;id&quot;:7,&quot;token&quot;:&quot;[redacted]&quot;}</code></td><td>Denied</td>');
    expect(body).toContain('Timed out (denied)');
    expect(body).toContain('href="/console/sessions/sess-1"');
  });

  it('tells two sessions of the same minute apart: first message, user name, last activity; the id is secondary', async () => {
    const store = await temp.open();
    const ann = (await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram', userId: '1', userName: 'Ann', model: 'openai:gpt-4.1-mini' }))
      .session;
    await store.appendMessages(ann.id, [{ role: 'user', content: 'What rhymes with <orange>?' }]);
    const bob = (await store.getOrCreateSession('agent:main:telegram:dm:2', { source: 'telegram', userId: '2', model: 'openai:gpt-4.1-mini' })).session;
    await store.appendMessages(bob.id, [{ role: 'user', content: 'Plan my trip to Oslo' }]);
    const app = await consoleApp(store);

    const res = await app.inject({ url: '/console/sessions', headers: COOKIE });
    expect(res.statusCode).toBe(200);
    const annRow = rowOf(res.body, ann.id);
    const bobRow = rowOf(res.body, bob.id);
    expect(annRow).toContain('“What rhymes with &lt;orange&gt;?”');
    expect(annRow).toMatch(/Ann <span class="muted">1<\/span>/);
    expect(bobRow).toContain('“Plan my trip to Oslo”');
    expect(bobRow).toContain('<td>2</td>');
    expect(annRow).toMatch(/<time datetime="[^"]+" title="[^"]+ UTC">just now<\/time>/);
    expect(annRow).toContain(`<span class="muted">${ann.id.slice(0, 8)}…${ann.id.slice(-4)}</span>`);

    const page = await app.inject({ url: `/console/sessions/${bob.id}`, headers: COOKIE });
    expect(page.body).toContain('<h1>“Plan my trip to Oslo”</h1>');
    // Search hits carry the same names.
    const hits = (await app.inject({ url: '/console/sessions?q=rhymes', headers: COOKIE })).body;
    expect(rowOf(hits, ann.id)).toContain('>“What rhymes with &lt;orange&gt;?”</a></th><td>telegram</td><td>Ann <span class="muted">1</span></td>');
  });

  it('names API sessions by the name the client gave, not the key label', async () => {
    const store = await temp.open();
    const named = (
      await store.getOrCreateSession('agent:main:api:dm:key-0123456789:support-bot', { source: 'api', userId: 'key-0123456789', chatId: 'support-bot' })
    ).session;
    await store.appendMessages(named.id, [{ role: 'user', content: 'hello from the widget' }]);
    const app = await consoleApp(store);
    const row = rowOf((await app.inject({ url: '/console/sessions', headers: COOKIE })).body, named.id);
    expect(row).toContain(`>support-bot</a>`);
    expect(row).toContain('no user given</span> <span class="muted">via API key key-0123456789</span>');
  });

  it('says "price unknown", with how to set a price, for a model without one instead of $0.0000', async () => {
    const store = await temp.open();
    const local = (await store.getOrCreateSession('agent:main:telegram:dm:5', { source: 'telegram', userId: '5', model: 'openai:my-local-llama' })).session;
    await store.addUsage(local.id, { input: 1000, output: 200, cacheRead: 0, cacheWrite: 0, costUsd: 0 });
    const priced = (await store.getOrCreateSession('agent:main:telegram:dm:6', { source: 'telegram', userId: '6', model: 'openai:gpt-4.1-mini' })).session;
    const app = await consoleApp(store);
    const body = (await app.inject({ url: '/console/sessions', headers: COOKIE })).body;
    expect(rowOf(body, local.id)).toContain('<a href="#price-hint">price unknown</a>');
    expect(rowOf(body, local.id)).not.toContain('$0.0000');
    expect(rowOf(body, priced.id)).toContain('$0.0000');
    expect(body).toMatch(/id="price-hint">Price unknown for openai:my-local-llama:[\s\S]*HERALD_PRICES='\{&quot;openai:my-local-llama&quot;/);
    const usage = (await app.inject({ url: '/console/usage', headers: COOKIE })).body;
    expect(usage).toContain('<a href="#price-hint">price unknown</a>');
  });

  it('says whether the OpenAI-compatible API is on in this process, and how to turn it on', async () => {
    const store = await temp.open();
    const on = (await (await consoleApp(store, { api: true })).inject({ url: '/console', headers: COOKIE })).body;
    expect(on).toMatch(/<span class="state ok">On<\/span> — this process answers the OpenAI-compatible API/);
    const off = (await (await consoleApp(store)).inject({ url: '/console', headers: COOKIE })).body;
    expect(off).toMatch(/<span class="state off">Off<\/span> — to turn it on, set HERALD_API_KEYS/);
    expect(off).not.toContain('is on when HERALD_API_KEYS is set');
    const worker = (await (await consoleApp(store, { role: 'worker' })).inject({ url: '/console', headers: COOKIE })).body;
    expect(worker).toContain('Off in this process');
  });

  it("shows each MCP server's crashes, restarts and last error on the overview, also once it is back up", async () => {
    const store = await temp.open();
    const local: McpServerJson = {
      name: 'local',
      transport: 'stdio',
      state: 'ready',
      tools: 4,
      error: null,
      since: '2026-12-06T08:00:05.000Z',
      failures: 0,
      crashes: 2,
      restarts: 3,
      last_error: 'the connection closed (stderr: out of <memory>)',
      last_error_at: '2026-12-06T08:00:00.000Z',
      next_attempt_at: null,
    };
    const body = (await (await consoleApp(store, { mcp: [local] })).inject({ url: '/console', headers: COOKIE })).body;
    expect(body).toContain('<h2 id="h-mcp">MCP servers</h2>');
    expect(body).toContain(
      '<tr><th scope="row">local</th><td>this process (pid 1)</td><td class="state ok">ready</td><td class="num">2</td><td class="num">3</td><td>the connection closed (stderr: out of &lt;memory&gt;) <span class="muted">(<time datetime="2026-12-06T08:00:00.000Z">2026-12-06 08:00 UTC</time>)</span></td></tr>',
    );
    const none = (await (await consoleApp(store)).inject({ url: '/console', headers: COOKIE })).body;
    expect(none).toContain('No MCP server: none is configured');
  });

  it('says on the overview, and live in queue.json, when the queue is paused (no turn starts), and not once it is resumed', async () => {
    const store = await temp.open();
    // The overview reads whether it is paused from the health answer (stubbed here); queue.json asks the queue.
    const paused = await consoleApp(store, { paused: true });
    const banner = /<p class="notice error" role="status" data-paused( hidden)?>Paused: messages wait in the queue/;
    expect(banner.exec((await paused.inject({ url: '/console', headers: COOKIE })).body)?.[1]).toBeUndefined();
    const running = await consoleApp(store);
    const shown = banner.exec((await running.inject({ url: '/console', headers: COOKIE })).body);
    expect(shown?.[1]).toBe(' hidden');

    const queue = queues.at(-1) as Queue; // the queue the running app's queue.json asks
    const live = async (): Promise<{ paused: boolean }> => (await running.inject({ url: '/console/queue.json', headers: COOKIE })).json();
    expect(await live()).toMatchObject({ paused: false });
    await queue.pause();
    expect(await live()).toMatchObject({ paused: true });
    await queue.resume();
    expect(await live()).toMatchObject({ paused: false });
  });

  it('answers an unknown console URL with an HTML 404 page, after the login like every page', async () => {
    const store = await temp.open();
    const app = await consoleApp(store);
    const anonymous = await app.inject({ url: '/console/nowhere' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/console/login?next=%2Fconsole%2Fnowhere');
    const res = await app.inject({ url: '/console/nowhere/else?x=1', headers: COOKIE });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toContain('<h1>Page not found</h1>');
    expect(res.body).toContain('The console has no page at /console/nowhere/else.');
    expect(res.body).toContain('Log out'); // the page shell of a logged-in operator
    const session = await app.inject({ url: '/console/sessions/0000-ghost', headers: COOKIE });
    expect(session.statusCode).toBe(404);
    expect(session.body).toContain('There is no session 0000-ghost.');
  });

  it('asks for the login before routing: 401 for a script or a form post, known URL or not; a browser goes to the login page', async () => {
    const store = await temp.open();
    const app = await consoleApp(store);
    const json = { accept: 'application/json' };
    for (const url of ['/console/queue.json', '/console/no-such-page', '/console/sessions/x', '/console']) {
      const res = await app.inject({ url, headers: json });
      expect(res.statusCode, url).toBe(401);
      expect(res.body, url).toContain('Log in to the console first');
    }
    for (const url of ['/console/pairing/approve', '/console/no-such-form', '/console/logout']) {
      const res = await app.inject({ method: 'POST', url, payload: 'platform=telegram&user_id=1' });
      expect(res.statusCode, url).toBe(401);
    }
    const browser = await app.inject({ url: '/console/no-such-page', headers: { accept: 'text/html,application/xhtml+xml', 'sec-fetch-mode': 'navigate' } });
    expect(browser.statusCode).toBe(303);
    expect(browser.headers.location).toBe('/console/login?next=%2Fconsole%2Fno-such-page');
    // The way in stays open.
    expect((await app.inject({ url: '/console/login', headers: json })).statusCode).toBe(200);
    expect((await app.inject({ url: '/console/assets/console.css', headers: json })).statusCode).toBe(200);
    expect((await app.inject({ url: '/console/queue.json', headers: { ...json, ...COOKIE } })).statusCode).toBe(200);
  });
});

/** The table row whose link opens this session. */
function rowOf(body: string, id: string): string {
  const at = body.indexOf(`/console/sessions/${id}"`);
  expect(at, `a row for ${id}`).toBeGreaterThan(0);
  return body.slice(body.lastIndexOf('<tr>', at), body.indexOf('</tr>', at));
}
