/**
 * Fuzz, the OpenAI-compatible API: one real gateway with HERALD_API_KEYS takes FUZZ_RUNS generated requests to
 * /v1 — Chat Completions and Responses bodies with one field of the wrong type, objects of anything, JSON that is
 * not an object, bytes that are not JSON, foreign content types, odd session headers, unknown paths and methods,
 * and now and then a wrong or missing key. Every answer is a 4xx in OpenAI's error shape (GET /v1/models a 200),
 * never a 5xx or a dropped connection; nothing reaches the model. Afterwards the openai SDK still gets an answer.
 */
import fc from 'fast-check';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { anyJson, corruptOneOf, foreignContentType, jsonBody, notJson, oddString, requestInit, type Json, type JsonPath, type RawBody } from './arbitraries.js';
import {
  FUZZ_RUNS,
  FUZZ_SEED,
  FUZZ_TEST_TIMEOUT_MS,
  expectNoErrorStacks,
  expectSurvived,
  fuzz,
  fuzzedGatewayEnv,
  hasStackTrace,
  statusOk,
  type Expected,
} from './harness.js';

const KEY = 'sk-fuzz-api-key-0123456789abcdef';

interface ApiRequest {
  kind: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: RawBody;
  headers: Record<string, string>;
  /** Headers the request must carry whatever else is generated (an id in the session header). */
  fixedHeaders?: Record<string, string>;
  expected: Expected;
}

const CHAT: Json = { model: 'herald', user: 'u', stream: false, messages: [{ role: 'user', content: 'hi' }] };
// Fields where any other type is wrong (null is fine for `stream`, `user` and `instructions`; a string is a fine
// Responses `input`), so each corrupted body is refused.
const CHAT_PATHS: JsonPath[] = [['model'], ['messages'], ['messages', 0], ['messages', 0, 'role'], ['messages', 0, 'content']];
const RESPONSES: Json = { model: 'herald', instructions: 'x', stream: false, input: [{ role: 'user', content: 'hi' }] };
const RESPONSES_PATHS: JsonPath[] = [['model'], ['input', 0], ['input', 0, 'role'], ['input', 0, 'content']];

/** Bodies that are wrong somewhere: every one must be refused before it becomes a turn. */
function badBodies(base: Json, paths: JsonPath[]): fc.Arbitrary<{ what: string; raw: RawBody }> {
  return fc.oneof(
    corruptOneOf(base, paths).map(({ value, path }) => ({ what: `a wrong ${path.join('.')}`, raw: jsonBody(value) })),
    fc
      .dictionary(fc.oneof(fc.constantFrom('model', 'messages', 'input', 'stream', 'user'), oddString), anyJson, { maxKeys: 4 })
      .map((v) => ({ what: 'an object of anything', raw: jsonBody(v) })),
    anyJson.filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)).map((v) => ({ what: 'JSON that is not an object', raw: jsonBody(v) })),
    notJson.map((body) => ({ what: 'not JSON', raw: { body, contentType: 'application/json' } })),
    // (A well-formed body labelled `application/json; charset=…` is JSON all the same: only broken ones here.)
    fc
      .tuple(foreignContentType, corruptOneOf(base, paths))
      .map(([contentType, v]) => ({ what: `content-type ${contentType}`, raw: { body: JSON.stringify(v.value), contentType } })),
    oddString.filter((m) => m !== 'herald').map((model) => ({ what: 'an unknown model', raw: jsonBody({ ...(base as object), model }) })),
  );
}

/** Values the id fields (`model`, `user`, the session header, `previous_response_id`) cannot take: each is a 400. */
const NOT_AN_ID: Json[] = [0, -1, -3, 0.5, 2 ** 53, 1e21, -1e300, true, false, [], ['herald'], {}, { id: 'herald' }];
const badIdBody: fc.Arbitrary<{ what: string; path: string; raw: RawBody; headers?: Record<string, string> }> = fc.oneof(
  fc
    .oneof(fc.constantFrom<Json>(...NOT_AN_ID, '', null), fc.constant(undefined as unknown as Json))
    .map((model) => ({ what: `model ${JSON.stringify(model) ?? 'missing'}`, path: '/v1/chat/completions', raw: jsonBody({ ...(CHAT as object), model }) })),
  fc
    .oneof(
      fc.constantFrom<Json>(...NOT_AN_ID, 'x'.repeat(257), 'a\u0000b', 'tab\there'),
      oddString.filter((u) => /[\u0000-\u001f\u007f]/.test(u.trim())),
    )
    .map((user) => ({ what: `user ${JSON.stringify(user).slice(0, 40)}`, path: '/v1/chat/completions', raw: jsonBody({ ...(CHAT as object), user }) })),
  fc.constantFrom<Json>(...NOT_AN_ID, 'resp_0', 'x'.repeat(300)).map((id) => ({
    what: `previous_response_id ${JSON.stringify(id).slice(0, 40)}`,
    path: '/v1/responses',
    raw: jsonBody({ ...(RESPONSES as object), previous_response_id: id }),
  })),
  fc.constantFrom('x'.repeat(257), 'y'.repeat(5_000)).map((session) => ({
    what: `a session header of ${session.length} characters`,
    path: '/v1/chat/completions',
    raw: jsonBody(CHAT),
    headers: { 'x-herald-session': session },
  })),
);

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,60}$/).map((v) => v.trim());
const sessionHeader = fc.option(fc.oneof(headerValue, fc.constant('x'.repeat(300))), { nil: undefined });

const REQUESTS: fc.Arbitrary<Omit<ApiRequest, 'headers'>> = fc.oneof(
  {
    arbitrary: badBodies(CHAT, CHAT_PATHS).map((b) => ({
      kind: `chat completion with ${b.what}`,
      method: 'POST' as const,
      path: '/v1/chat/completions',
      body: b.raw,
      expected: '4xx' as const,
    })),
    weight: 5,
  },
  {
    arbitrary: badBodies(RESPONSES, RESPONSES_PATHS).map((b) => ({
      kind: `response with ${b.what}`,
      method: 'POST' as const,
      path: '/v1/responses',
      body: b.raw,
      expected: '4xx' as const,
    })),
    weight: 4,
  },
  {
    arbitrary: badIdBody.map((b) => ({
      kind: `${b.path} with ${b.what}`,
      method: 'POST' as const,
      path: b.path,
      body: b.raw,
      fixedHeaders: b.headers,
      expected: [400] as const,
    })),
    weight: 4,
  },
  { arbitrary: fc.constant({ kind: 'the model list', method: 'GET' as const, path: '/v1/models', expected: [200] as const }), weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'), fc.stringMatching(/^[a-z0-9_~/-]{0,30}$/))
      .filter(([m, p]) => !['/models', '/chat/completions', '/responses'].includes(`/${p}`) && !(m === 'GET' && /^models\/./.test(p)))
      .map(([method, p]) => ({ kind: `${method} an unknown path`, method: method as ApiRequest['method'], path: `/v1/${p}`, expected: '4xx' as const })),
    weight: 1,
  },
);

const apiRequest: fc.Arbitrary<ApiRequest> = fc
  .tuple(
    REQUESTS,
    sessionHeader,
    fc.oneof({ arbitrary: fc.constant(`Bearer ${KEY}`), weight: 18 }, { arbitrary: headerValue, weight: 1 }, { arbitrary: fc.constant(''), weight: 1 }),
  )
  .map(([req, session, authorization]) => {
    const headers: Record<string, string> = {
      ...(session !== undefined && { 'x-herald-session': session }),
      ...req.fixedHeaders,
      ...(authorization && { authorization }),
    };
    const wrongKey = authorization !== `Bearer ${KEY}`;
    return { ...req, headers, ...(wrongKey && { kind: `${req.kind}, wrong or no key`, expected: [401] }) };
  });

describe(`fuzz: the OpenAI-compatible API (${FUZZ_RUNS} requests, seed ${FUZZ_SEED})`, () => {
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    gw = await startGateway({
      env: {
        HERALD_MODEL: 'openai:gpt-4.1-mini',
        OPENAI_API_KEY: 'sk-upstream',
        OPENAI_BASE_URL: llm.url,
        HERALD_API_KEYS: KEY,
        HERALD_API_RATE_LIMIT: '0',
        ...fuzzedGatewayEnv(),
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
  });

  it(
    "answers every request with a 4xx in OpenAI's shape (or the model list), stays up with flat memory, and still answers the SDK",
    async () => {
      const run = await fuzz('api', gw, apiRequest, async (r) => {
        const init: RequestInit = r.body ? { ...requestInit(r.body, r.headers), method: r.method } : { method: r.method, headers: r.headers };
        const res = await fetch(`${gw.url}${r.path}`, init);
        const text = await res.text();
        if (hasStackTrace(text)) throw new Error(`${r.kind}: a stack trace in the answer: ${text.slice(0, 200)}`);
        if (!statusOk(r.expected, res.status))
          throw new Error(`${r.kind}: ${r.method} ${r.path} → HTTP ${res.status} (${text.slice(0, 200)}), expected ${String(r.expected)}`);
        if (res.status >= 400) {
          const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown } };
          if (typeof body.error?.message !== 'string' || typeof body.error.type !== 'string')
            throw new Error(`${r.kind}: an error not in OpenAI's shape: ${text.slice(0, 200)}`);
        }
      });
      await expectSurvived(gw, run);
      expectNoErrorStacks(gw);
      expect(llm.requests, 'LLM requests made during the fuzz').toEqual([]);

      const client = new OpenAI({ apiKey: KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const res = await client.chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'fuzzing is over' }] });
      expect(res.choices[0].message.content).toBe('ok: fuzzing is over');
      expect(llm.requests.map(lastUserText)).toEqual(['fuzzing is over']);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
