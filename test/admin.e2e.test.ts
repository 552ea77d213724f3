/**
 * Operations on real gateway processes: health (detailed, readiness with workers), /metrics, the admin API and
 * its token, the queue dashboard's browser login, and the per-user rate limit — through the Telegram and OpenAI
 * stand-ins driven by the real SDKs inside the gateway, real Redis and a temp SQLite file.
 */
import { ApprovalAudit } from '../apps/gateway/src/features/approvals/audit.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { fastify } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { metric } from './helpers/metrics.js';
import { waitFor } from './helpers/ports.js';
import { PairingService } from '../apps/gateway/src/features/pairing/index.js';
import { mountAdminApi } from '../apps/gateway/src/edges/admin/api.js';
import { loadConfig } from '../apps/gateway/src/support/config/load.js';
import { openSchedules } from '../apps/gateway/src/features/schedules/index.js';
import { ProfileTable } from '../apps/gateway/src/features/profiles/table.js';
import { openKnowledge } from '../apps/gateway/src/features/prompt/knowledge.js';
import { budgetGuardFor } from '../apps/gateway/src/features/budgets/guard.js';
import { DASHBOARD_COOKIE, DASHBOARD_PATH } from '../apps/gateway/src/edges/admin/auth.js';
import { SessionStore } from '../packages/agent-core/src/store/index.js';

const TOKEN = 'admin-token-for-tests-0123456789';

interface SessionJson {
  id: string;
  key: string;
  source: string;
  user_id: string | null;
  ended_at: string | null;
  end_reason: string | null;
  started_at: string;
  last_active: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  actual_cost_usd: number | null;
}
interface PlatformJson {
  state: string;
  last_event_at: string | null;
  error: string | null;
}
interface DetailedJson {
  status: string;
  role: string;
  pid: number;
  version: string;
  active_turns: number;
  platforms: Record<string, PlatformJson>;
  workers: Array<{ pid: number; running_turns: number; last_heartbeat_at: string }>;
  queue: Record<string, number> | null;
  queue_paused: boolean | null;
  queue_error: string | null;
  workers_error: string | null;
}
interface QueueJson {
  paused: boolean;
  counts: Record<string, number>;
  recent_failures: Array<{ id: string; session_key: string | null; reason: string }>;
}
interface SchemaJson {
  type?: string;
  required?: string[];
  properties?: Record<string, SchemaJson>;
}
interface OperationJson {
  parameters?: Array<{ name: string; required: boolean }>;
  requestBody?: { content: Record<string, { schema: SchemaJson }> };
  responses: Record<string, { content?: Record<string, { schema: SchemaJson }> }>;
}
interface OpenApiJson {
  openapi: string;
  paths: Record<string, Record<string, OperationJson>>;
}

function call(gw: GatewayProcess, path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const { token = TOKEN, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  if (rest.body) headers.set('content-type', 'application/json');
  return fetch(`${gw.url}${path}`, { ...rest, headers, redirect: 'manual' });
}

async function json<T>(gw: GatewayProcess, path: string, init: RequestInit & { token?: string | null } = {}): Promise<T> {
  const res = await call(gw, path, init);
  expect(res.status, `${init.method ?? 'GET'} ${path}`).toBe(200);
  return (await res.json()) as T;
}

/**
 * Every route the admin API registers (method and URL), read from the registration itself: mountAdminApi on a
 * throw-away fastify instance with an onRoute hook. A route added later is covered without editing a list.
 */
async function registeredAdminRoutes(): Promise<Array<{ method: string; url: string }>> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-routes-'));
  const prefix = uniquePrefix('routes');
  const routes: Array<{ method: string; url: string }> = [];
  const app = fastify();
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url });
  });
  const store = await SessionStore.open(join(dir, 'herald.db'));
  const pairing = new PairingService(store.sql);
  const queue = new Queue('turns', { connection: { url: 'redis://127.0.0.1:6379' }, prefix });
  const config = loadConfig({ env: { HERALD_REDIS_PREFIX: prefix }, file: null });
  const schedules = openSchedules(config, store, pino({ level: 'silent' }));
  try {
    await mountAdminApi(app, {
      token: TOKEN,
      store,
      queue,
      pairing,
      schedules: schedules.service,
      profiles: new ProfileTable(config),
      routes: [],
      budgets: budgetGuardFor(config, store.sql),
      knowledge: openKnowledge(config, store.sql, pino({ level: 'silent' })),
      approvals: new ApprovalAudit(store.sql),
    });
    await app.ready();
  } finally {
    await app.close();
    await queue.close();
    await schedules.close();
    await store.close();
    await deleteRedisPrefix(prefix);
    rmSync(dir, { recursive: true, force: true });
  }
  return routes;
}

describe('operations on one process (role all) with the Telegram stand-in', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  const prefix = uniquePrefix('admin');

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    gw = await startGateway({ env: telegramEnv(tg, llm, { HERALD_ADMIN_TOKEN: TOKEN, HERALD_REDIS_PREFIX: prefix }) });
    await waitFor(async () => (await json<DetailedJson>(gw, '/health/detailed')).platforms.telegram.state === 'connected', {
      what: 'telegram connected',
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await tg?.close();
    await llm?.close();
    await deleteRedisPrefix(prefix);
  });

  it('answers a message, then the admin routes answer 200 with the token', async () => {
    // The answer reports its cost the way OpenRouter does (usage.cost): the session keeps it apart from the estimate.
    llm.script({ text: 'ok: hello admin, remember the word pumpernickel', usage: { input: 100, output: 20, cost: 0.0042 } });
    tg.injectMessage({ chatId: 4242, userId: 4242, text: 'hello admin, remember the word pumpernickel' });
    await waitFor(() => repliesIn(tg, 4242).length >= 1, { what: 'the reply' });

    const list = await json<{ sessions: SessionJson[] }>(gw, '/admin/sessions?source=telegram&active=true');
    const session = list.sessions.find((s) => s.user_id === '4242')!;
    expect(session).toMatchObject({ source: 'telegram', key: 'agent:main:telegram:dm:4242', ended_at: null });
    // M1: the record stage keeps the activity and the totals (the title call may have added its tokens since).
    expect(session.actual_cost_usd).toBeCloseTo(0.0042, 10);
    expect(session.total_tokens).toBe(session.input_tokens + session.output_tokens + session.cache_read_tokens + session.cache_write_tokens);
    expect(session.total_tokens).toBeGreaterThanOrEqual(120);
    expect(Date.parse(session.last_active)).toBeGreaterThan(Date.parse(session.started_at));
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/admin/sessions'],
      ['GET', `/admin/sessions/${session.id}`],
      ['GET', '/admin/search?q=pumpernickel'],
      ['GET', '/admin/queue'],
      ['POST', '/admin/queue/retry-failed'],
      ['GET', '/admin/openapi.json'],
      ['GET', '/admin/queues'],
      ['GET', '/admin/queues/api/queues'],
      ['GET', '/admin/pairing'],
      ['GET', '/admin/approvals?decision=denied&limit=5'],
      ['POST', '/admin/sessions/reset', { key: 'agent:main:telegram:dm:4242' }],
    ];
    for (const [method, path, body] of routes) {
      const init = { method, body: body ? JSON.stringify(body) : undefined };
      expect((await call(gw, path, init)).status, `${method} ${path} with the token`).toBe(200);
    }

    // What those answered: the transcript, the search hit, the reset.
    const shown = await json<{ session: SessionJson; messages: Array<{ role: string; content: string | null }> }>(gw, `/admin/sessions/${session.id}`);
    expect(shown.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello admin, remember the word pumpernickel'],
      ['assistant', 'ok: hello admin, remember the word pumpernickel'],
    ]);
    expect(shown.session).toMatchObject({ end_reason: 'admin_reset' });
    expect(shown.session.ended_at).not.toBeNull();
    const search = await json<{ hits: Array<{ session_id: string; snippet: string }> }>(gw, '/admin/search?q=pumpernickel');
    expect(search.hits.map((h) => h.session_id)).toContain(session.id);
    expect(search.hits[0].snippet).toContain('>>>pumpernickel<<<');
    expect((await call(gw, '/admin/sessions/reset', { method: 'POST', body: JSON.stringify({ key: 'agent:main:telegram:dm:4242' }) })).status).toBe(404);
    expect((await call(gw, '/admin/sessions?cursor=not-a-cursor')).status).toBe(400);
    expect((await call(gw, '/admin/sessions?source=fax')).status).toBe(400);

    // The next message on the reset key starts a new session.
    tg.injectMessage({ chatId: 4242, userId: 4242, text: 'second' });
    await waitFor(() => repliesIn(tg, 4242).length >= 2, { what: 'the second reply' });
    const after = await json<{ sessions: SessionJson[] }>(gw, '/admin/sessions?user=4242');
    expect(after.sessions).toHaveLength(2);
    expect(after.sessions[0]).toMatchObject({ ended_at: null });
  });

  it('every registered /admin route answers 401 to no token, a wrong one, one wrong in its last character, or another scheme', async () => {
    const routes = await registeredAdminRoutes();
    // The enumeration sees the documented API and the dashboard's own routes (its writes included).
    const doc = await json<OpenApiJson>(gw, '/admin/openapi.json');
    const seen = new Set(routes.map((r) => r.url.replace(/:(\w+)/g, '{$1}')));
    for (const path of Object.keys(doc.paths)) expect(seen, path).toContain(path);
    expect(routes).toContainEqual({ method: 'PUT', url: `${DASHBOARD_PATH}/api/queues/:queueName/obliterate` });

    const lastCharWrong = `${TOKEN.slice(0, -1)}${TOKEN.endsWith('0') ? '1' : '0'}`;
    const attempts: Array<[string, Record<string, string>, string?]> = [
      ['no token', {}],
      ['a wrong token', { authorization: 'Bearer wrong-token' }],
      ['the token wrong in its last character', { authorization: `Bearer ${lastCharWrong}` }],
      ['the token and one more character', { authorization: `Bearer ${TOKEN}0` }],
      ['the token as Basic credentials', { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` }],
      ['the token under the Token scheme', { authorization: `Token ${TOKEN}` }],
      ['the bare token', { authorization: TOKEN }],
      ['the token in X-Api-Key', { 'x-api-key': TOKEN }],
      ['the token as the dashboard cookie', { cookie: `${DASHBOARD_COOKIE}=${TOKEN}` }],
      ['a near-miss ?token=', {}, `token=${lastCharWrong}`],
    ];
    for (const { method, url } of routes) {
      const path = url.replace(/:\w+/g, 'x').replace(/\*$/, 'x');
      // The dashboard takes ?token= by design (a browser login); nothing else does.
      const queryToken: Array<[string, Record<string, string>, string?]> = path.startsWith(DASHBOARD_PATH)
        ? []
        : [['the token in ?token=', {}, `token=${TOKEN}`]];
      for (const [what, headers, query] of [...attempts, ...queryToken]) {
        const res = await fetch(`${gw.url}${path}${query ? `?${query}` : ''}`, { method, headers, redirect: 'manual' });
        expect(res.status, `${method} ${path} with ${what}`).toBe(401);
      }
    }
    // With the token, an unknown /admin path is a plain 404: the token is checked before routing, not instead of it.
    expect((await call(gw, '/admin/no-such-route')).status).toBe(404);
  });

  it('authenticates before routing: an unknown /admin or /console path answers like a known one; /health/detailed wants the token, the probes do not', async () => {
    for (const path of ['/admin/no-such-route', '/admin', '/admin/sessions/x/y/z', '/%61dmin/sessions']) {
      const res = await call(gw, path, { token: null });
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate'), path).toBe('Bearer realm="herald-admin"');
    }
    // The console: a tool or a script gets 401 for any page; a browser is sent to the login, which stays open.
    for (const path of ['/console', '/console/no-such-page', '/console/queue.json']) {
      expect((await call(gw, path, { token: null, headers: { accept: 'application/json' } })).status, path).toBe(401);
    }
    expect((await call(gw, '/console/no-such-form', { token: null, method: 'POST' })).status).toBe(401);
    const browser = await call(gw, '/console/no-such-page', { token: null, headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' } });
    expect(browser.status).toBe(303);
    expect(browser.headers.get('location')).toBe('/console/login?next=%2Fconsole%2Fno-such-page');
    expect((await call(gw, '/console/login', { token: null })).status).toBe(200);
    expect((await call(gw, '/console/assets/console.css', { token: null })).status).toBe(200);

    const detailed = await call(gw, '/health/detailed', { token: null });
    expect(detailed.status).toBe(401);
    expect(await detailed.text()).not.toContain('"workers"');
    expect((await call(gw, '/health/detailed', { token: 'wrong-token-0123456789' })).status).toBe(401);
    expect((await call(gw, '/health/detailed')).status).toBe(200);
    expect((await call(gw, '/health', { token: null })).status).toBe(200);
    expect((await call(gw, '/health/ready', { token: null })).status).toBe(200);
  });

  it('/admin/openapi.json documents every admin route with its parameters', async () => {
    const doc = await json<OpenApiJson>(gw, '/admin/openapi.json');
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/admin/approvals',
        '/admin/budgets',
        '/admin/budgets/reset',
        '/admin/pairing',
        '/admin/pairing/approve',
        '/admin/pairing/deny',
        '/admin/pairing/revoke',
        '/admin/queue',
        '/admin/queue/retry-failed',
        '/admin/profiles',
        '/admin/profiles/{name}/skills',
        '/admin/profiles/{name}/skills/{skill}',
        '/admin/schedules',
        '/admin/schedules/{id}',
        '/admin/schedules/{id}/cancel',
        '/admin/search',
        '/admin/sessions',
        '/admin/sessions/export',
        '/admin/sessions/reset',
        '/admin/sessions/{id}',
        '/admin/sessions/{id}/prompt',
      ].sort(),
    );
    expect(doc.paths['/admin/sessions/{id}/prompt'].get.responses['200'].content?.['application/json'].schema.properties?.layers.type).toEqual([
      'array',
      'null',
    ]);
    expect(doc.paths['/admin/schedules'].get.parameters?.map((p) => p.name)).toEqual(['status', 'platform', 'user', 'limit']);
    expect(doc.paths['/admin/approvals'].get.parameters?.map((p) => p.name)).toEqual(['session_id', 'tool', 'decision', 'limit', 'before']);
    expect(doc.paths['/admin/schedules/{id}/cancel'].post.parameters?.find((p) => p.name === 'id')?.required).toBe(true);
    const list = doc.paths['/admin/sessions'].get;
    expect(list.parameters?.map((p) => p.name)).toEqual(['source', 'user', 'profile', 'active', 'cursor', 'limit']);
    expect(doc.paths['/admin/search'].get.parameters?.find((p) => p.name === 'q')?.required).toBe(true);
    expect(doc.paths['/admin/sessions/reset'].post.requestBody?.content['application/json'].schema.required).toEqual(['key']);
    expect(doc.paths['/admin/sessions/{id}'].get.responses['200'].content?.['application/json'].schema.properties?.messages.type).toBe('array');
  });

  it('pairing: a pending code is listed (without the code), approved by code, then revoked; another is denied', async () => {
    // The code a stranger got in a DM, issued by the same service the gateway uses on the same SQLite file.
    const issueCode = async (userId: string, name: string): Promise<string> => {
      const store = await SessionStore.open(gw.dbPath);
      try {
        const issued = await new PairingService(store.sql).request('telegram', userId, name);
        if (issued.status !== 'issued') throw new Error(`no code issued: ${issued.status}`);
        return issued.code;
      } finally {
        await store.close();
      }
    };
    const code = await issueCode('31337', 'Zed');
    const listed = await json<{ pending: Array<Record<string, unknown>>; approved: unknown[] }>(gw, '/admin/pairing?platform=telegram');
    expect(listed.pending).toEqual([expect.objectContaining({ platform: 'telegram', user_id: '31337', user_name: 'Zed' })]);
    expect(JSON.stringify(listed)).not.toContain(code);

    const post = (path: string, body: unknown, token?: string | null) => call(gw, path, { method: 'POST', body: JSON.stringify(body), token });
    expect((await post('/admin/pairing/approve', { platform: 'telegram', code }, null)).status).toBe(401);
    const wrong = await post('/admin/pairing/approve', { platform: 'telegram', code: 'WRONGCOD' });
    expect(wrong.status).toBe(404);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_code', attempts_left: 4 });
    expect((await post('/admin/pairing/approve', { platform: 'fax', code })).status).toBe(400);
    const ok = await post('/admin/pairing/approve', { platform: 'telegram', code: code.toLowerCase() });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ platform: 'telegram', user_id: '31337', user_name: 'Zed' });
    const approved = await json<{ pending: unknown[]; approved: Array<Record<string, unknown>> }>(gw, '/admin/pairing');
    expect(approved.pending).toEqual([]);
    expect(approved.approved).toEqual([expect.objectContaining({ platform: 'telegram', user_id: '31337' })]);

    expect((await post('/admin/pairing/revoke', { platform: 'telegram', user_id: '31337' })).status).toBe(200);
    expect((await post('/admin/pairing/revoke', { platform: 'telegram', user_id: '31337' })).status).toBe(404);
    expect((await json<{ approved: unknown[] }>(gw, '/admin/pairing')).approved).toEqual([]);

    // Another stranger's request, denied: gone from the list, and its code no longer approves anyone.
    const denied = await issueCode('4711', 'Eve');
    expect(await (await post('/admin/pairing/deny', { platform: 'telegram', user_id: '4711' })).json()).toEqual({ denied: true });
    expect((await post('/admin/pairing/deny', { platform: 'telegram', user_id: '4711' })).status).toBe(404);
    expect((await json<{ pending: unknown[] }>(gw, '/admin/pairing')).pending).toEqual([]);
    expect((await post('/admin/pairing/approve', { platform: 'telegram', code: denied })).status).toBe(404);
  });

  it('the queue dashboard: ?token= once sets an HttpOnly cookie and redirects without the token; the cookie then suffices', async () => {
    const login = await call(gw, `/admin/queues?token=${TOKEN}`, { token: null });
    expect(login.status).toBe(302);
    expect(login.headers.get('location')).toBe('/admin/queues');
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(TOKEN);
    const jar = cookie.split(';')[0];
    const page = await call(gw, '/admin/queues', { token: null, headers: { cookie: jar } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Herald queues');
    const api = await call(gw, '/admin/queues/api/queues', { token: null, headers: { cookie: jar } });
    expect(((await api.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name)).toEqual(['turns']);
    // The cookie opens the dashboard only, not the rest of the admin API.
    expect((await call(gw, '/admin/sessions', { token: null, headers: { cookie: jar } })).status).toBe(401);
    expect((await call(gw, `/admin/queues?token=wrong-${TOKEN}`, { token: null })).status).toBe(401);
  });

  it('/metrics counts the messages received and their turns, LLM requests, latency and tokens', async () => {
    const before = (await metric(gw, 'herald_messages_received_total', { platform: 'telegram' })) ?? 0;
    const turnsBefore = (await metric(gw, 'herald_turns_total', { outcome: 'delivered' })) ?? 0;
    llm.script({ text: 'counted', usage: { input: 40, output: 7 } });
    tg.injectMessage({ chatId: 5151, userId: 5151, text: 'count me' });
    await waitFor(() => repliesIn(tg, 5151).includes('counted'), { what: 'the reply' });
    await waitFor(async () => (await metric(gw, 'herald_turns_total', { outcome: 'delivered' })) === turnsBefore + 1, { what: 'the turn counted' });
    expect(await metric(gw, 'herald_messages_received_total', { platform: 'telegram' })).toBe(before + 1);
    expect(await metric(gw, 'herald_turn_duration_seconds_count', { outcome: 'delivered' })).toBe(turnsBefore + 1);
    expect(await metric(gw, 'herald_llm_requests_total', { provider: 'openai', model: 'gpt-4.1-mini', status: 'ok' })).toBe(turnsBefore + 1);
    expect(await metric(gw, 'herald_llm_request_duration_seconds_count', { provider: 'openai' })).toBe(turnsBefore + 1);
    expect(await metric(gw, 'herald_llm_tokens_total', { provider: 'openai', kind: 'output' })).toBeGreaterThanOrEqual(7);
    expect(await metric(gw, 'herald_queue_jobs', { state: 'waiting' })).toBe(0);
    expect(await metric(gw, 'herald_active_turns')).toBe(0);
    expect(await metric(gw, 'process_cpu_user_seconds_total')).not.toBeNull();
  });

  it('the 21st message in a minute from one user gets one polite notice and no turn; later ones silence; /stop still works', async () => {
    const user = 777;
    for (let i = 1; i <= 23; i++) tg.injectMessage({ chatId: user, userId: user, text: `rl m${i}` });
    await waitFor(() => repliesIn(tg, user).some((t) => t.includes('faster than I can take them')), { timeoutMs: 20_000, what: 'the notice' });
    // Let everything admitted be answered.
    await waitFor(() => llm.requests.some((r) => /\brl m20\b/.test(lastUserText(r))), { timeoutMs: 20_000, what: 'm20 reaching the model' });
    // The gateway's own account of each refusal, logged before any notice is sent: exactly one was told.
    const refusals = () => gw.logs().filter((l) => l.msg === 'message over the user rate limit dropped' && l.userId === String(user));
    await waitFor(() => refusals().length === 3, { what: 'm21–m23 to be refused' });
    expect(refusals().map((l) => l.notified)).toEqual([true, false, false]);
    const notices = repliesIn(tg, user).filter((t) => t.includes('faster than I can take them'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/limit: 20 per minute/);
    const seen = llm.requests.map(lastUserText).join('\n');
    for (let i = 1; i <= 20; i++) expect(seen, `m${i} answered`).toMatch(new RegExp(`\\brl m${i}\\b`));
    for (const i of [21, 22, 23]) expect(seen, `m${i} never reached the model`).not.toMatch(new RegExp(`\\brl m${i}\\b`));
    expect(await metric(gw, 'herald_messages_rate_limited_total', { platform: 'telegram' })).toBe(3);

    const before = repliesIn(tg, user).length;
    tg.injectMessage({ chatId: user, userId: user, text: '/stop' });
    await waitFor(() => repliesIn(tg, user).length > before, { what: 'the /stop answer' });
    expect(repliesIn(tg, user).at(-1)).toMatch(/stop/i);
  });

  it('/health/detailed: version, role, workers with heartbeats, queue counts; Telegram connected, then disconnected when the stand-in stops', async () => {
    // Earlier tests in this file leave turns finishing (the rate-limit test's admitted messages): wait until idle.
    const d = await waitFor(
      async () => {
        const now = await json<DetailedJson>(gw, '/health/detailed');
        return now.active_turns === 0 && now.queue?.waiting === 0 && now.queue.active === 0 ? now : null;
      },
      { timeoutMs: 60_000, what: 'no turn running' },
    );
    expect(d).toMatchObject({ status: 'ok', role: 'all', pid: gw.proc.pid, active_turns: 0, queue_error: null, workers_error: null });
    expect(d.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(d.platforms.telegram.state).toBe('connected');
    expect(Date.parse(d.platforms.telegram.last_event_at ?? '')).toBeGreaterThan(Date.now() - 120_000);
    expect(d.platforms.discord).toEqual({ state: 'disabled', last_event_at: null, error: 'DISCORD_BOT_TOKEN is not set' });
    expect(d.platforms.slack.state).toBe('disabled');
    expect(d.workers).toHaveLength(1);
    expect(d.workers[0]).toMatchObject({ pid: gw.proc.pid, running_turns: 0 });
    expect(Date.parse(d.workers[0].last_heartbeat_at)).toBeGreaterThan(Date.now() - 30_000);
    expect(d.queue).toMatchObject({ waiting: 0, active: 0, failed: 0 });

    await tg.stop();
    const down = await waitFor(
      async () => {
        const h = await json<DetailedJson>(gw, '/health/detailed');
        return h.platforms.telegram.state === 'disconnected' ? h : null;
      },
      { timeoutMs: 20_000, what: 'telegram to show disconnected' },
    );
    expect(down.platforms.telegram.error).toBeTruthy();
  });
});

describe('without HERALD_ADMIN_TOKEN', () => {
  it('the admin API is off: every /admin route is 404, health and metrics still answer', async () => {
    const prefix = uniquePrefix('noadmin');
    const gw = await startGateway({ env: { HERALD_REDIS_PREFIX: prefix } });
    try {
      for (const path of ['/admin/sessions', '/admin/openapi.json', '/admin/queues', '/admin/queue']) {
        expect((await call(gw, path)).status, path).toBe(404);
        expect((await call(gw, path, { token: null })).status, path).toBe(404);
      }
      expect((await call(gw, `/admin/queues?token=${TOKEN}`, { token: null })).status).toBe(404);
      expect((await fetch(`${gw.url}/health/detailed`)).status).toBe(200);
      expect((await fetch(`${gw.url}/metrics`)).status).toBe(200);
    } finally {
      await gw.stop();
      await deleteRedisPrefix(prefix);
    }
  });
});

describe('an ingress without workers', () => {
  const prefix = uniquePrefix('ingress');
  const dir = mkdtempSync(join(tmpdir(), 'herald-admin-'));
  const env = { HERALD_ADMIN_TOKEN: TOKEN, HERALD_REDIS_PREFIX: prefix, HERALD_DB: join(dir, 'herald.db') };
  const started: GatewayProcess[] = [];

  afterAll(async () => {
    await Promise.all(started.map((g) => g.stop()));
    await deleteRedisPrefix(prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not ready (503 naming workers) until a worker process heartbeats; failed jobs are listed and retried; a paused queue is shown and holds them until resumed', async () => {
    const ingress = await startGateway({ env, args: ['--role', 'ingress'] });
    started.push(ingress);
    const res = await fetch(`${ingress.url}/health/ready`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ failed: ['workers'], checks: { redis: 'ok', sqlite: 'ok', workers: 'no worker seen in the last 30 s' } });

    // A job that failed (here: a throw-away BullMQ worker in this test process fails it).
    const connection = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null };
    const queue = new Queue('turns', { connection, prefix });
    const failer = new Worker('turns', async () => Promise.reject(new Error('boom for the test')), { connection, prefix });
    try {
      await queue.add('turn', { sessionKey: 'agent:main:cli:dm:admin-test', entryId: 'admin.test', seq: 1 }, { jobId: 'admin.test.1' });
      await waitFor(async () => (await queue.getJobCounts('failed')).failed === 1, { what: 'the job to fail' });
    } finally {
      await failer.close();
    }
    const stats = await json<QueueJson>(ingress, '/admin/queue');
    expect(stats.counts).toMatchObject({ failed: 1 });
    expect(stats.recent_failures).toEqual([
      expect.objectContaining({ id: 'admin.test.1', session_key: 'agent:main:cli:dm:admin-test', reason: 'boom for the test' }),
    ]);
    expect(await json(ingress, '/admin/queue/retry-failed', { method: 'POST' })).toEqual({ retried: 1 });
    const retried = await json<QueueJson>(ingress, '/admin/queue');
    expect(retried.counts).toMatchObject({ failed: 0, waiting: 1 });
    expect(retried.paused).toBe(false);
    await queue.close();

    // Paused in the queue dashboard ("pause all"): /admin/queue, /health/detailed and /metrics say so.
    expect((await call(ingress, '/admin/queues/api/queues/pause', { method: 'PUT' })).status).toBe(200);
    expect(await json<QueueJson>(ingress, '/admin/queue')).toMatchObject({ paused: true, counts: { waiting: 1 } });
    expect((await json<DetailedJson>(ingress, '/health/detailed')).queue_paused).toBe(true);
    expect(await metric(ingress, 'herald_queue_paused')).toBe(1);

    // A worker comes up: it heartbeats, readiness follows, it says the queue is paused, and runs nothing.
    const worker = await startGateway({ env, args: ['--role', 'worker'] });
    started.push(worker);
    await waitFor(async () => (await fetch(`${ingress.url}/health/ready`)).status === 200, { timeoutMs: 15_000, what: 'ready with a worker' });
    await worker.waitForLog((l) => l.level === 40 && /the turn queue is paused/.test(String(l.msg)), 'the worker saying the queue is paused');
    const d = await json<DetailedJson>(ingress, '/health/detailed');
    expect(d.workers.map((w) => w.pid)).toEqual([worker.proc.pid]);
    expect(d.platforms.telegram).toMatchObject({ state: 'disabled' });
    expect((await json<QueueJson>(ingress, '/admin/queue')).counts).toMatchObject({ waiting: 1, active: 0 });

    // Resumed: the worker runs the retried job (an empty mailbox: done at once).
    expect((await call(ingress, '/admin/queues/api/queues/resume', { method: 'PUT' })).status).toBe(200);
    expect((await json<QueueJson>(ingress, '/admin/queue')).paused).toBe(false);
    expect(await metric(ingress, 'herald_queue_paused')).toBe(0);
    await waitFor(async () => (await json<QueueJson>(ingress, '/admin/queue')).counts.waiting === 0, { what: 'the retried job to run' });

    // A worker that stops cleanly is gone at once, and readiness says so.
    await worker.stop();
    await waitFor(async () => (await fetch(`${ingress.url}/health/ready`)).status === 503, { what: 'not ready once the worker left' });
  });
});
