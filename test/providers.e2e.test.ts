/**
 * Provider machinery in the real gateway process: a fallback chain across named endpoints (a vLLM-like local
 * server, then OpenRouter-style Claude with cache markers), an OpenAI key pool whose cooled key every process
 * skips (state in Redis) and /health/detailed shows by fingerprint, the session as prompt_cache_key and a
 * byte-identical system prompt on every call, the Responses and Bedrock modes from configuration, and the
 * ShareGPT export from the admin API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { repliesIn } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { waitFor } from './helpers/ports.js';
import { keyFingerprint } from '../packages/agent-core/src/providers/key-pool.js';

const TOKEN = 'admin-token-for-tests-0123456789';
const KEYS = ['sk-e2e-first-key-000001', 'sk-e2e-second-key-00002'];
const ROUTER_KEY = 'sk-or-e2e-router-key-01';

interface PoolJson {
  pool: string;
  strategy: string;
  keys: Array<{ fingerprint: string; state: string; uses: number; reason: string | null }>;
}

const keyOf = (r: RecordedRequest): string => r.headers.authorization?.replace(/^Bearer /, '') ?? '';

/** Sends a message and waits for the expected answer (status lines such as a fallback notice may come first). */
async function ask(tg: TelegramFake, chatId: number, text: string, answer: string): Promise<void> {
  const before = repliesIn(tg, chatId).length;
  tg.injectMessage({ chatId, userId: chatId, text });
  await waitFor(() => repliesIn(tg, chatId).slice(before).includes(answer), { timeoutMs: 30_000, what: `"${answer}" in answer to "${text}"` });
}

describe('named endpoints, key pools and caching in the gateway', () => {
  let tg: TelegramFake;
  let openai: FakeLLM;
  let vllm: FakeLLM;
  let router: FakeLLM;
  let gw: GatewayProcess;
  const prefix = uniquePrefix('providers');

  beforeAll(async () => {
    tg = await startTelegramFake();
    openai = await startFakeOpenAI();
    vllm = await startFakeOpenAI();
    router = await startFakeOpenAI({ apiKey: ROUTER_KEY });
    gw = await startGateway({
      env: {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.url,
        GATEWAY_ALLOW_ALL_USERS: 'true',
        HERALD_REDIS_PREFIX: prefix,
        HERALD_ADMIN_TOKEN: TOKEN,
        HERALD_MODEL: 'openai:gpt-4.1-mini',
        HERALD_FALLBACK_MODELS: 'vllm:qwen3-8b,openrouter:anthropic/claude-sonnet-4.5',
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: KEYS[0]!,
        OPENAI_API_KEY_2: KEYS[1]!,
        HERALD_ENDPOINTS: JSON.stringify([
          { name: 'vllm', base_url: vllm.url },
          { name: 'openrouter', base_url: router.url },
        ]),
        OPENROUTER_API_KEY: ROUTER_KEY,
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([tg?.close(), openai?.close(), vllm?.close(), router?.close()]);
    await deleteRedisPrefix(prefix);
  });

  it('rotates past a refused key inside one call and shows the cooled key on /health/detailed', async () => {
    openai.script({ error: { status: 401 } }, { text: 'answered with the second key' });
    await ask(tg, 501, 'hello', 'answered with the second key');
    expect(openai.requests.map(keyOf)).toEqual(KEYS);

    const res = await fetch(`${gw.url}/health/detailed`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = (await res.json()) as { key_pools: PoolJson[] };
    const pool = body.key_pools.find((p) => p.pool === 'openai')!;
    expect(pool.keys.map((k) => [k.fingerprint, k.state])).toEqual([
      [keyFingerprint(KEYS[0]!), 'cooling'],
      [keyFingerprint(KEYS[1]!), 'ready'],
    ]);
    expect(pool.keys[0]!.reason).toBe('refused (401)');
    // Keys never appear: not in the health answer, not in any log line.
    const logs = JSON.stringify(gw.logs());
    for (const key of [...KEYS, ROUTER_KEY]) {
      expect(JSON.stringify(body)).not.toContain(key);
      expect(logs).not.toContain(key);
    }
  });

  it('skips the cooled key on the next turn (the cooldown lives in Redis) and sends the session as prompt_cache_key', async () => {
    const before = openai.requests.length;
    openai.script({ text: 'second turn' });
    await ask(tg, 501, 'again', 'second turn');
    const next = openai.requests.slice(before);
    expect(next.map(keyOf)).toEqual([KEYS[1]]);
    const first = openai.requests[1]!.body;
    const second = next[0]!.body;
    expect(second.prompt_cache_key).toEqual(first.prompt_cache_key);
    expect(typeof second.prompt_cache_key).toBe('string');
    // The system prompt is the one stored with the session, byte for byte.
    const system = (b: Record<string, unknown>): unknown => (b.messages as Array<{ role: string; content: unknown }>)[0];
    expect(system(second)).toEqual(system(first));
    expect(JSON.stringify(system(second))).toContain('# This conversation');
  });

  it('falls back along the chain: OpenAI refuses the model, so does the local endpoint, then Claude through OpenRouter with cache markers', async () => {
    openai.respondWith(() => ({ error: { status: 404 } }));
    vllm.respondWith(() => ({ error: { status: 404 } }));
    router.script({ text: 'from claude via the router' });
    await ask(tg, 502, 'anyone there?', 'from claude via the router');

    const sent = router.requests.at(-1)!;
    expect(sent.body.model).toBe('anthropic/claude-sonnet-4.5');
    expect(keyOf(sent)).toBe(ROUTER_KEY);
    const messages = sent.body.messages as Array<{ role: string; content: unknown }>;
    const systemParts = messages[0]!.content as Array<{ text: string; cache_control?: unknown }>;
    expect(systemParts.map((p) => p.cache_control)).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }]);
    expect(JSON.stringify(messages.at(-1))).toContain('"cache_control":{"type":"ephemeral"}');
    // Not OpenAI: no prompt_cache_key field a strict server could refuse.
    expect(sent.body).not.toHaveProperty('prompt_cache_key');
    expect(vllm.requests.at(-1)!.body.model).toBe('qwen3-8b');
  });

  it('exports the conversations as ShareGPT JSONL from the admin API, filtered by status and source', async () => {
    const res = await fetch(`${gw.url}/admin/sessions/export?format=sharegpt&source=telegram&status=completed`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const records = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { conversations: Array<{ from: string; value: string }>; completed: boolean; source: string });
    expect(records).toHaveLength(2);
    const first = records.find((r) => r.conversations.some((t) => t.value === 'hello'))!;
    expect(first.conversations.map((t) => t.from)).toEqual(['system', 'human', 'gpt', 'human', 'gpt']);
    expect(first.conversations[2]!.value).toBe('<think>\n</think>\nanswered with the second key');
    expect(records.every((r) => r.completed && r.source === 'telegram')).toBe(true);

    const bad = await fetch(`${gw.url}/admin/sessions/export?format=sharegpt&since=yesterday`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/since: must be a date/);
  });
});

describe('Responses and Bedrock modes from configuration', () => {
  it('a per-model api_mode sends a model through the Responses API; Bedrock answers with the AWS chain', async () => {
    const tg = await startTelegramFake();
    const openai = await startFakeOpenAI();
    const bedrock = await startFakeBedrock({ accessKeyId: 'AKIAE2EBEDROCK000001' });
    const prefix = uniquePrefix('modes');
    const gw = await startGateway({
      env: {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.url,
        GATEWAY_ALLOW_ALL_USERS: 'true',
        HERALD_REDIS_PREFIX: prefix,
        HERALD_MODEL: 'openai:o4-mini',
        HERALD_MODEL_API_MODES: 'openai:o4-mini=responses',
        HERALD_FALLBACK_MODELS: 'bedrock:anthropic.claude-3-5-haiku-20241022-v1:0',
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: 'sk-modes',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'AKIAE2EBEDROCK000001',
        AWS_SECRET_ACCESS_KEY: 'e2e-secret',
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
      },
    });
    try {
      openai.script({ text: 'via responses', usage: { input: 10, output: 3, cacheRead: 2000 } });
      await ask(tg, 601, 'first', 'via responses');
      expect(openai.requests[0]!.path).toBe('/v1/responses');

      openai.respondWith(() => ({ error: { status: 429, retryAfter: 300 } }));
      bedrock.script({ text: 'via bedrock', usage: { input: 3000, output: 3 } });
      await ask(tg, 601, 'second', 'via bedrock');
      expect(bedrock.requests[0]!.headers.authorization).toMatch(/Credential=AKIAE2EBEDROCK000001\/\d{8}\/us-east-1\/bedrock\//);
      // The session read 99 % of its prompt from cache, then (on another provider) none: the operator hears of it.
      await gw.waitForLog((l) => l.msg === 'prompt cache hit rate collapsed for this session (model switched, or the prompt prefix changed)');
    } finally {
      await gw.stop();
      await Promise.all([tg.close(), openai.close(), bedrock.close()]);
      await deleteRedisPrefix(prefix);
    }
  });
});
