/**
 * Fuzz, the admin API: one real gateway with HERALD_ADMIN_TOKEN takes FUZZ_RUNS generated requests with the right
 * bearer token to every admin route — the documented ones (checked against /admin/openapi.json) and the queue
 * dashboard's — with odd query strings (unknown names, wrong types, broken percent-encoding), path parameters,
 * JSON bodies of the wrong shape, bodies that are not JSON, foreign content types and odd extra headers; now and
 * then a wrong token. Invalid input gets a 4xx, never a 5xx or a dropped connection. Afterwards a normal message
 * through Telegram is still answered end to end, and it is the only thing the LLM ever saw.
 *
 * Not sent: the dashboard's actions on the real queue (pause all, empty, obliterate, add a job…). They do what
 * they say; the dashboard's own actions are fuzzed against queue names that do not exist.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from '../fakes/telegram/index.js';
import { repliesIn, telegramEnv } from '../helpers/env.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { waitFor } from '../helpers/ports.js';
import {
  anyJson,
  corruptOneOf,
  foreignContentType,
  notJson,
  oddString,
  jsonBody,
  requestInit,
  type Json,
  type JsonObject,
  type RawBody,
} from './arbitraries.js';
import { FUZZ_RUNS, FUZZ_SEED, FUZZ_TEST_TIMEOUT_MS, expectSurvived, fuzz, fuzzedGatewayEnv, statusOk, type Expected } from './harness.js';

const TOKEN = 'fuzz-admin-token-0123456789abcdef';
const PROBE = 4242;
const QUEUE = 'turns';
const PLATFORMS = ['telegram', 'discord', 'slack'];

interface Request {
  kind: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: RawBody;
  headers: Record<string, string>;
  expected: Expected;
}

/** Percent-encodes every UTF-8 byte that is not unreserved; lone surrogates become U+FFFD, as in a real client. */
function segment(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`))
    .join('');
}

/**
 * A value for one path segment: not empty, and not "." or "..", which the client resolves before sending (even
 * percent-encoded), so they would address another route: queues/./pause is the dashboard's "pause all queues".
 */
const pathSegment = oddString.filter((s) => s !== '' && s !== '.' && s !== '..');

/** Query values: odd strings, numbers and booleans as text, the valid values too. */
const queryValue = (valid: readonly string[] = []): fc.Arbitrary<string> =>
  fc.oneof(oddString, fc.integer().map(String), fc.constantFrom('true', 'false', '', '0', '-1', '1e3', 'null', '[]', '%', '%zz', '%E0%A4%A', ...valid));
/** A query string of known and unknown names, sometimes repeated, sometimes with raw (broken) percent-encoding. */
function queryString(names: readonly string[], valid: Record<string, readonly string[]> = {}): fc.Arbitrary<string> {
  const pair = fc
    .oneof(fc.constantFrom(...names), oddString)
    .chain((name) => queryValue(Object.hasOwn(valid, name) ? valid[name] : []).map((value) => [name, value] as const));
  return fc
    .oneof(
      fc.array(pair, { maxLength: 5 }).map((pairs) => pairs.map(([k, v]) => `${segment(k)}=${/^%/.test(v) ? v : segment(v)}`).join('&')),
      fc.stringMatching(/^[\x21-\x7e]{0,40}$/).map((raw) => raw.replace(/#/g, '%23')),
    )
    .map((q) => (q === '' ? '' : `?${q}`));
}

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/).map((v) => v.trim());
/** Extra headers a client or a proxy may add, with odd values. */
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'accept',
    'accept-language',
    'cookie',
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-forwarded-host',
    'x-request-id',
    'if-none-match',
    'if-modified-since',
    'range',
    'origin',
    'referer',
    'user-agent',
    'cache-control',
    'x-http-method-override',
  ),
  headerValue,
  { maxKeys: 3 },
);

/** Bodies for a route whose body schema is `base`'s shape: the right shape with odd values, or a broken one. */
function bodies(base: JsonObject): fc.Arbitrary<{ what: string; raw: RawBody; wellFormed: boolean }> {
  const keys = Object.keys(base);
  return fc.oneof(
    fc
      .record(Object.fromEntries(keys.map((k) => [k, k === 'platform' ? fc.constantFrom(...PLATFORMS) : oddString])))
      .map((v) => ({ what: 'odd values', raw: jsonBody(v), wellFormed: true })),
    corruptOneOf(
      base,
      keys.map((k) => [k]),
    ).map(({ value, path }) => ({ what: `a wrong ${path.join('.')}`, raw: jsonBody(value), wellFormed: false })),
    fc
      .dictionary(fc.oneof(fc.constantFrom(...keys), oddString), anyJson, { maxKeys: 4 })
      .map((v) => ({ what: 'an object of anything', raw: jsonBody(v), wellFormed: false })),
    anyJson
      .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
      .map((v) => ({ what: 'JSON that is not an object', raw: jsonBody(v), wellFormed: false })),
    notJson.map((body) => ({ what: 'not JSON', raw: { body, contentType: 'application/json' }, wellFormed: false })),
    fc
      .tuple(foreignContentType, anyJson)
      .map(([contentType, v]) => ({ what: `content-type ${contentType}`, raw: { body: JSON.stringify(v), contentType }, wellFormed: false })),
  );
}

const get = (kind: string, path: string, expected: Expected = 'not 5xx'): Omit<Request, 'headers'> => ({ kind, method: 'GET', path, expected });

/** Every documented admin route, with the inputs it takes. */
const DOCUMENTED: Record<string, fc.Arbitrary<Omit<Request, 'headers'>>> = {
  '/admin/sessions': queryString(['source', 'user', 'active', 'cursor', 'limit'], { source: [...PLATFORMS, 'cli', 'api'] }).map((q) =>
    get('list sessions', `/admin/sessions${q}`),
  ),
  '/admin/sessions/{id}': fc
    .tuple(pathSegment, queryString(['after_id', 'limit']))
    .map(([id, q]) => get('one session', `/admin/sessions/${segment(id)}${q}`, [400, 404])),
  '/admin/sessions/export': queryString(['format', 'source', 'since', 'until', 'status'], {
    format: ['sharegpt'],
    source: [...PLATFORMS, 'cli', 'api'],
    status: ['completed', 'failed', 'all'],
  }).map((q) => get('export sessions', `/admin/sessions/export${q}`)),
  '/admin/sessions/{id}/prompt': pathSegment.map((id) => get('a session prompt', `/admin/sessions/${segment(id)}/prompt`, [400, 404])),
  '/admin/approvals': queryString(['session_id', 'tool', 'decision', 'limit', 'before'], {
    decision: ['approved_once', 'approved_session', 'denied', 'timed_out', 'refused'],
  }).map((q) => get('approval decisions', `/admin/approvals${q}`)),
  '/admin/profiles/{name}/skills': oddString
    .filter((s) => s !== '')
    .map((name) => get("a profile's skills", `/admin/profiles/${segment(name)}/skills`, [200, 400, 404])),
  '/admin/profiles/{name}/skills/{skill}': fc
    .tuple(fc.oneof(fc.constant('default'), pathSegment), pathSegment)
    .map(([name, skill]) => get('one skill', `/admin/profiles/${segment(name)}/skills/${segment(skill)}`, [400, 404])),
  '/admin/search': queryString(['q', 'source', 'user', 'limit']).map((q) => get('search', `/admin/search${q}`)),
  '/admin/sessions/reset': bodies({ key: 'agent:main:telegram:dm:1' }).map((b) => ({
    kind: `reset with ${b.what}`,
    method: 'POST',
    path: '/admin/sessions/reset',
    body: b.raw,
    expected: '4xx',
  })),
  '/admin/queue': queryString(['state']).map((q) => get('queue', `/admin/queue${q}`, [200])),
  '/admin/profiles': queryString(['verbose']).map((q) => get('profiles', `/admin/profiles${q}`)),
  '/admin/budgets': queryString(['scope'], { scope: ['global', 'user:telegram:', 'profile:'] }).map((q) => get('budgets', `/admin/budgets${q}`)),
  // Well-formed scopes reset nothing here (nothing was spent); the rest are 400s.
  '/admin/budgets/reset': bodies({ scope: 'user:telegram:1', period: 'day' }).map((b) => ({
    kind: `budget reset with ${b.what}`,
    method: 'POST' as const,
    path: '/admin/budgets/reset',
    body: b.raw,
    expected: 'not 5xx' as const,
  })),
  '/admin/queue/retry-failed': fc.oneof(
    fc.constant({ kind: 'retry failed without a body', method: 'POST' as const, path: '/admin/queue/retry-failed', expected: [200] as const }),
    bodies({ all: 'yes' }).map((b) => ({
      kind: `retry failed with ${b.what}`,
      method: 'POST' as const,
      path: '/admin/queue/retry-failed',
      body: b.raw,
      expected: 'not 5xx' as const,
    })),
  ),
  '/admin/pairing': queryString(['platform'], { platform: PLATFORMS }).map((q) => get('pairing list', `/admin/pairing${q}`)),
  // No code is pending, so even a well-formed one is wrong: 404, or 429 once five wrong ones lock pairing.
  '/admin/pairing/approve': bodies({ platform: 'telegram', code: 'ABCD2345' }).map((b) => ({
    kind: `approve with ${b.what}`,
    method: 'POST',
    path: '/admin/pairing/approve',
    body: b.raw,
    expected: '4xx',
  })),
  '/admin/pairing/revoke': bodies({ platform: 'telegram', user_id: '1' }).map((b) => ({
    kind: `revoke with ${b.what}`,
    method: 'POST',
    path: '/admin/pairing/revoke',
    body: b.raw,
    expected: '4xx',
  })),
  '/admin/pairing/deny': bodies({ platform: 'telegram', user_id: '1' }).map((b) => ({
    kind: `deny with ${b.what}`,
    method: 'POST',
    path: '/admin/pairing/deny',
    body: b.raw,
    expected: '4xx',
  })),
  '/admin/schedules': queryString(['status', 'platform', 'user', 'limit'], { status: ['active', 'done', 'cancelled'], platform: PLATFORMS }).map((q) =>
    get('list schedules', `/admin/schedules${q}`),
  ),
  // No task exists, so every id is unknown (404) or malformed (400).
  '/admin/schedules/{id}': pathSegment.map((id) => get('one schedule', `/admin/schedules/${segment(id)}`, [400, 404])),
  '/admin/schedules/{id}/cancel': fc.tuple(pathSegment, fc.option(bodies({ reason: 'x' }))).map(([id, b]) => ({
    kind: `cancel a schedule${b ? ` with ${b.what}` : ''}`,
    method: 'POST',
    path: `/admin/schedules/${segment(id)}/cancel`,
    ...(b && { body: b.raw }),
    expected: '4xx',
  })),
};
const OPENAPI = queryString(['format']).map((q) => get('the OpenAPI document', `/admin/openapi.json${q}`, [200]));

/** A queue name that is not Herald's: the dashboard's actions on it must be refused. */
const otherQueue = pathSegment.filter((s) => s !== QUEUE).map(segment);
const jobId = fc.oneof(fc.nat().map(String), pathSegment).map(segment);
const DASHBOARD: fc.Arbitrary<Omit<Request, 'headers'>> = fc.oneof(
  queryString(['activeQueue', 'status', 'page', 'jobsPerPage', 'sortOrder'], {
    activeQueue: [QUEUE],
    status: ['latest', 'active', 'waiting', 'failed', 'completed'],
  }).map((q) => get('dashboard queues', `/admin/queues/api/queues${q}`)),
  fc
    .constantFrom(
      '',
      '/api/redis/stats',
      '/api/job-schedulers',
      `/api/queues/${QUEUE}/metrics`,
      `/api/queues/${QUEUE}/workers`,
      `/api/queues/${QUEUE}/rate-limit`,
      `/api/queues/${QUEUE}/default-job-options`,
      `/api/queues/${QUEUE}/job-data-schema`,
    )
    .map((p) => get('a dashboard page', `/admin/queues${p}`)),
  fc
    .tuple(fc.oneof(fc.constant(QUEUE), otherQueue), jobId, fc.constantFrom('', '/logs', '/flow'))
    .map(([q, id, tail]) => get('a job in the dashboard', `/admin/queues/api/queues/${q}/${id}${tail}`)),
  fc.tuple(otherQueue, jobId, fc.constantFrom('retry', 'clean', 'promote', 'remove-unprocessed-children')).map(([q, id, action]) => ({
    kind: `dashboard job ${action}`,
    method: 'PUT' as const,
    path: `/admin/queues/api/queues/${q}/${id}/${action}`,
    expected: 'not 5xx' as const,
  })),
  fc
    .tuple(
      otherQueue,
      fc.constantFrom('retry/failed', 'clean/completed', 'promote', 'pause', 'resume', 'empty', 'concurrency', 'rate-limit'),
      fc.option(anyJson),
    )
    .map(([q, action, body]) => ({
      kind: `dashboard queue ${action}`,
      method: 'PUT' as const,
      path: `/admin/queues/api/queues/${q}/${action}`,
      ...(body !== null && { body: jsonBody(body) }),
      expected: 'not 5xx' as const,
    })),
  fc.tuple(otherQueue, jobId, fc.constantFrom('update-data', 'delay', 'priority'), anyJson).map(([q, id, action, body]) => ({
    kind: `dashboard job ${action}`,
    method: 'PATCH' as const,
    path: `/admin/queues/api/queues/${q}/${id}/${action}`,
    body: jsonBody(body),
    expected: 'not 5xx' as const,
  })),
  fc.tuple(otherQueue, anyJson).map(([q, body]) => ({
    kind: 'dashboard add job',
    method: 'POST' as const,
    path: `/admin/queues/api/queues/${q}/add`,
    body: jsonBody(body),
    expected: 'not 5xx' as const,
  })),
  // No "." or ".." segment: the client resolves those before sending (static/../x is /admin/queues/x, a route that
  // does not exist, so a plain 404 even without the token, as every unknown /admin path).
  fc
    .stringMatching(/^[a-z0-9./_-]{1,30}$/)
    .filter((p) => !p.split('/').some((s) => s === '.' || s === '..'))
    .map((p) => get('a dashboard file', `/admin/queues/static/${p}`)),
);

const adminRequest: fc.Arbitrary<Request> = fc
  .tuple(
    fc.oneof({ arbitrary: fc.oneof(...Object.values(DOCUMENTED), OPENAPI), weight: 6 }, { arbitrary: DASHBOARD, weight: 3 }),
    extraHeaders,
    fc.oneof({ arbitrary: fc.constant(`Bearer ${TOKEN}`), weight: 19 }, { arbitrary: headerValue, weight: 1 }),
  )
  .map(([req, headers, authorization]) => {
    const wrongToken = authorization !== `Bearer ${TOKEN}`;
    return { ...req, headers: { ...headers, authorization }, ...(wrongToken && { kind: `${req.kind}, wrong token`, expected: [401] }) };
  });

describe(`fuzz: the admin API (${FUZZ_RUNS} requests, seed ${FUZZ_SEED})`, () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    const env = telegramEnv(tg, llm, { HERALD_ADMIN_TOKEN: TOKEN, TELEGRAM_ALLOWED_USERS: String(PROBE) });
    delete env.GATEWAY_ALLOW_ALL_USERS;
    gw = await startGateway({ env: { ...env, ...fuzzedGatewayEnv() } });
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await tg?.close();
  });

  it('fuzzes every route the OpenAPI document lists', async () => {
    const res = await fetch(`${gw.url}/admin/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const doc = (await res.json()) as { paths: Record<string, Json> };
    expect(Object.keys(DOCUMENTED).sort()).toEqual(Object.keys(doc.paths).sort());
  });

  it(
    'answers every request with a 2xx or a 4xx, stays up with flat memory, and still answers a message end to end',
    async () => {
      const run = await fuzz('admin', gw, adminRequest, async (r) => {
        const init: RequestInit = r.body ? { ...requestInit(r.body, r.headers), method: r.method } : { method: r.method, headers: r.headers };
        const res = await fetch(`${gw.url}${r.path}`, { ...init, redirect: 'manual' });
        const text = await res.text();
        if (!statusOk(r.expected, res.status))
          throw new Error(`${r.kind}: ${r.method} ${r.path} → HTTP ${res.status} (${text.slice(0, 200)}), expected ${String(r.expected)}`);
      });
      await expectSurvived(gw, run);
      expect(llm.requests, 'LLM requests made during the fuzz').toEqual([]);

      tg.injectMessage({ chatId: PROBE, userId: PROBE, text: 'fuzzing is over' });
      await waitFor(() => repliesIn(tg, PROBE).length >= 1, { timeoutMs: 20_000, what: "the answer to PROBE's message" });
      expect(repliesIn(tg, PROBE)).toEqual(['ok: fuzzing is over']);
      expect(llm.requests.map(lastUserText)).toEqual(['fuzzing is over']);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
