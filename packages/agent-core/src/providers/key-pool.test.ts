/**
 * Credential pools through the real openai SDK: strategies, 429 → one more try then the next key, 401/402 →
 * the key cooled down (402 for longer), every key tried once per request, never a key in an error message, and
 * rotation invisible to the loop's retry budget. Also stream health: a stall is cut at the stall timeout and the
 * key's client rebuilt before the loop retries.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest } from '../../../../test/fakes/llm/index.js';
import { lastUserText } from '../../../../test/helpers/llm-tags.js';
import { runConversation } from '../loop/run-conversation.js';
import { KeyPool, MemoryKeyPoolState, keyFingerprint, type KeyStrategy } from './key-pool.js';
import { createProvider } from './resolve.js';
import { ClientPool } from './request.js';
import type { CompletionRequest, Provider, TransportReset } from './types.js';

const KEYS = ['sk-pool-one-1111', 'sk-pool-two-2222', 'sk-pool-three-33'];
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, random: () => 0 };

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake.close();
});

function pooled(pool: KeyPool): Provider {
  return createProvider({ provider: 'openai', model: 'gpt-4.1-mini', keyPool: pool, baseUrl: fake.url });
}
function request(text = 'hi'): CompletionRequest {
  return { systemPrompt: 'S', messages: [{ role: 'user', content: text }], tools: [], signal: new AbortController().signal };
}
const keyOf = (r: RecordedRequest): string => r.headers.authorization?.replace(/^Bearer /, '') ?? '';

describe('key pool strategies', () => {
  it.each<[KeyStrategy, string[]]>([
    ['fill_first', [KEYS[0]!, KEYS[0]!, KEYS[0]!, KEYS[0]!]],
    ['round_robin', [KEYS[0]!, KEYS[1]!, KEYS[2]!, KEYS[0]!]],
  ])('%s hands out keys in its order', async (strategy, expected) => {
    const provider = pooled(new KeyPool({ label: 'openai', keys: KEYS, strategy }));
    for (let i = 0; i < 4; i++) await provider.complete(request());
    expect(fake.requests.map(keyOf)).toEqual(expected);
  });

  it('least_used picks the key with the fewest uses, shared through the pool state', async () => {
    const state = new MemoryKeyPoolState();
    await state.recordUse('openai', keyFingerprint(KEYS[0]!));
    await state.recordUse('openai', keyFingerprint(KEYS[1]!));
    const provider = pooled(new KeyPool({ label: 'openai', keys: KEYS, strategy: 'least_used', state }));
    await provider.complete(request());
    await provider.complete(request());
    expect(fake.requests.map(keyOf)).toEqual([KEYS[2], KEYS[0]]);
  });
});

describe('a pool of one key', () => {
  it('hands out its key without reading the shared state, even while it rests; uses are still counted', async () => {
    const state = new MemoryKeyPoolState();
    const reads: string[] = [];
    for (const method of ['cooling', 'uses', 'nextTurn'] as const) {
      const original = state[method].bind(state) as (...args: never[]) => Promise<unknown>;
      (state as unknown as Record<string, unknown>)[method] = (...args: never[]) => (reads.push(method), original(...args));
    }
    const only = KEYS[0]!;
    for (const strategy of ['fill_first', 'round_robin', 'least_used'] as const) {
      const pool = new KeyPool({ label: `one-${strategy}`, keys: [only], strategy, state });
      await state.cool(`one-${strategy}`, keyFingerprint(only), 60_000, 'rate limited (429)');
      expect((await pool.acquire(new Set()))?.key).toBe(only);
      expect(await pool.acquire(new Set([keyFingerprint(only)]))).toBeUndefined();
      expect(reads).toEqual([]);
      expect(await pool.status()).toEqual([expect.objectContaining({ uses: 1, state: 'cooling', reason: 'rate limited (429)' })]);
      reads.length = 0;
    }
  });
});

describe('key rotation inside one request', () => {
  it('a 429 is tried once more on the same key, then on the next key, which is used from then on', async () => {
    const pool = new KeyPool({ label: 'openai', keys: KEYS });
    fake.script({ error: { status: 429, retryAfter: 0 } }, { error: { status: 429, retryAfter: 0 } }, { text: 'third time' });
    const result = await runConversation({
      userMessage: 'hi',
      history: [],
      systemPrompt: 'S',
      provider: pooled(pool),
      retry: { ...FAST_RETRY, maxRetries: 0 },
    });

    expect(result.finalResponse).toBe('third time');
    // The loop saw one call and spent no retry (maxRetries 0 would have ended the turn).
    expect(result.apiCalls).toBe(1);
    expect(fake.requests.map(keyOf)).toEqual([KEYS[0], KEYS[0], KEYS[1]]);
    const status = await pool.status();
    expect(status[0]).toMatchObject({ state: 'cooling', reason: 'rate limited (429)' });
    expect(status[1]!.state).toBe('ready');
  });

  it('401 and 402 rotate at once and cool the key; 402 for much longer', async () => {
    const pool = new KeyPool({ label: 'openai', keys: KEYS, cooldowns: { authMs: 60_000, billingMs: 86_400_000 } });
    fake.script({ error: { status: 401 } }, { error: { status: 402, kind: 'auth' } }, { text: 'the third key works' });
    const result = await pooled(pool).complete(request());

    expect(result.message.content).toBe('the third key works');
    expect(fake.requests.map(keyOf)).toEqual(KEYS);
    const [first, second] = await pool.status();
    expect(first).toMatchObject({ state: 'cooling', reason: 'refused (401)' });
    expect(second).toMatchObject({ state: 'cooling', reason: 'billing (402)' });
    expect(second!.cooldownRemainingMs!).toBeGreaterThan(first!.cooldownRemainingMs! * 100);
    // The next request skips both cooled keys without asking the API with them.
    await pooled(pool).complete(request());
    expect(keyOf(fake.requests[3]!)).toBe(KEYS[2]);
  });

  it('with every key refused the loop gets the error once, and no message names a key', async () => {
    const pool = new KeyPool({ label: 'openai', keys: KEYS });
    fake.respondWith(() => ({ error: { status: 401 } }));
    const result = await runConversation({ userMessage: 'hi', history: [], systemPrompt: 'S', provider: pooled(pool), retry: FAST_RETRY });
    expect(result.error?.kind).toBe('auth');
    expect(fake.requests).toHaveLength(3);
    for (const key of KEYS) expect(JSON.stringify(result)).not.toContain(key);
  });

  it('when every key is cooling, the one free soonest is still tried rather than failing unasked', async () => {
    const state = new MemoryKeyPoolState();
    const pool = new KeyPool({ label: 'openai', keys: KEYS.slice(0, 2), state });
    await state.cool('openai', keyFingerprint(KEYS[0]!), 50_000, 'x');
    await state.cool('openai', keyFingerprint(KEYS[1]!), 10_000, 'x');
    await pooled(pool).complete(request());
    expect(keyOf(fake.requests[0]!)).toBe(KEYS[1]);
  });

  it('fingerprints are short hashes that never contain the key', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 8 }), (key) => {
        const fp = keyFingerprint(key);
        expect(fp).toMatch(/^sha256:[0-9a-f]{8}$/);
        expect(fp.includes(key)).toBe(false);
      }),
    );
  });
});

describe('stream health', () => {
  it('cuts a stalled stream at the stall timeout and rebuilds the client before the retry', async () => {
    const resets: TransportReset[] = [];
    const provider = createProvider({
      provider: 'openai',
      model: 'gpt-4.1-mini',
      keyPool: new KeyPool({ label: 'openai', keys: KEYS.slice(0, 1) }),
      baseUrl: fake.url,
      stallTimeoutMs: 200,
      onTransportReset: (e) => resets.push(e),
    });
    // Stalls before any text (text already streamed would be continued instead: loop/final-response.test.ts).
    fake.script({ text: 'never finished', stallAfterEvents: 1 }, { text: 'after the rebuild' });
    const retriesSeen: number[] = [];
    const result = await runConversation({
      userMessage: 'hi',
      history: [],
      systemPrompt: 'S',
      provider,
      retry: FAST_RETRY,
      // When the loop announces its retry, the client is already rebuilt.
      onEvent: (e) => void (e.type === 'status' && e.kind === 'retry' ? retriesSeen.push(resets.length) : undefined),
    });

    expect(result.finalResponse).toBe('after the rebuild');
    expect(fake.requests[0]!.aborted).toBe(true);
    expect(resets).toEqual([
      { provider: 'openai', model: 'gpt-4.1-mini', fingerprint: keyFingerprint(KEYS[0]!), error: 'stream stalled: nothing received for 200 ms' },
    ]);
    expect(retriesSeen).toEqual([1]);
  });

  it('measures silence, not duration: a stream whose every gap is shorter than the stall timeout runs past it whole', async () => {
    const provider = createProvider({ provider: 'openai', model: 'gpt-4.1-mini', apiKey: KEYS[0], baseUrl: fake.url, stallTimeoutMs: 500 });
    // Four deltas 180 ms apart: 540 ms in all, never 500 ms without a chunk (room for a busy machine's delays).
    fake.script({ text: 'one two three four', chunkDelayMs: 180 });
    const result = await provider.complete(request());
    expect(result.message.content).toBe('one two three four');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.aborted).toBe(false);
  });

  it('a connection cut mid-stream is a transport failure: the client is rebuilt and the retry answers', async () => {
    const resets: TransportReset[] = [];
    const provider = createProvider({ provider: 'openai', model: 'gpt-4.1-mini', apiKey: KEYS[0], baseUrl: fake.url, onTransportReset: (e) => resets.push(e) });
    // Cut after the role chunk, before any text (a cut after text is continued from it: loop/call-model.ts).
    fake.script({ text: 'cut off in the middle of it', dropAfterEvents: 1 }, { text: 'on a fresh connection' });
    const result = await runConversation({ userMessage: 'hi', history: [], systemPrompt: 'S', provider, retry: FAST_RETRY });
    expect(result.finalResponse).toBe('on a fresh connection');
    expect(fake.requests).toHaveLength(2);
    expect(resets).toHaveLength(1);
    expect(resets[0]!.fingerprint).toBe(keyFingerprint(KEYS[0]!));
  });

  it('a server that never answers the request is a stall too (nothing received at all), not a 10-minute wait', async () => {
    const resets: TransportReset[] = [];
    const provider = createProvider({
      provider: 'openai',
      model: 'gpt-4.1-mini',
      apiKey: KEYS[0],
      baseUrl: fake.url,
      stallTimeoutMs: 150,
      onTransportReset: (e) => resets.push(e),
    });
    fake.script({ text: 'headers never come', delayMs: 120_000 });
    const err = await provider.complete(request()).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'timeout', transport: true, message: 'stream stalled: nothing received for 150 ms' });
    expect(resets).toHaveLength(1);
    await vi.waitFor(() => expect(fake.requests[0]!.aborted).toBe(true));
  });

  it("one stream's transport failure rebuilds the client without cutting the other turns' streams on that key", async () => {
    const resets: TransportReset[] = [];
    const provider = createProvider({ provider: 'openai', model: 'gpt-4.1-mini', apiKey: KEYS[0], baseUrl: fake.url, onTransportReset: (e) => resets.push(e) });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fake.respondWith(async (req) => {
      if (lastUserText(req) !== 'long') return { text: 'cut off in the middle of it', dropAfterEvents: 2 };
      await held;
      return { text: 'the long answer' };
    });
    const long = provider.complete(request('long'));
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    await expect(provider.complete(request('short'))).rejects.toMatchObject({ transport: true });
    expect(resets).toHaveLength(1);
    // The long call was in flight on the client the failure retired: it still gets its answer, on its connection.
    release();
    expect((await long).message.content).toBe('the long answer');
    expect(fake.requests[0]!.aborted).toBe(false);
    expect(resets).toHaveLength(1);
  });

  it('an HTTP error is no transport failure: the client is kept', async () => {
    const resets: TransportReset[] = [];
    const provider = createProvider({ provider: 'openai', model: 'm', apiKey: 'k', baseUrl: fake.url, onTransportReset: (e) => resets.push(e) });
    fake.script({ error: { status: 500 } }, { text: 'ok' });
    await runConversation({ userMessage: 'hi', history: [], systemPrompt: 'S', provider, retry: FAST_RETRY });
    expect(fake.requests).toHaveLength(2);
    expect(resets).toEqual([]);
  });

  it('a rebuild retires the old connection pool and the next call gets a new client', () => {
    const closed: number[] = [];
    let built = 0;
    const pool = new ClientPool(() => {
      const id = ++built;
      return { client: { id }, retire: () => closed.push(id) };
    });
    const key = { key: 'k', fingerprint: 'fp' };
    expect(pool.get(key)).toBe(pool.get(key));
    pool.rebuild(key);
    expect(closed).toEqual([1]);
    expect(pool.get(key)).toEqual({ id: 2 });
  });
});
