/**
 * The side-task chain through the real SDKs: a 402 (out of credit) or an outage on one model hands the same
 * request to the next; a cancelled request goes nowhere else; every model failing ends in the last error.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import { createFallbackProvider, type SideFallback } from './fallback.js';
import { createProvider } from './resolve.js';
import { ProviderError, type CompletionRequest, type Provider } from './types.js';

let router: FakeLLM;
let local: FakeLLM;
let claude: FakeLLM;
beforeEach(async () => {
  [router, local, claude] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeAnthropic()]);
});
afterEach(async () => {
  await Promise.all([router.close(), local.close(), claude.close()]);
});

const request = (signal = new AbortController().signal): CompletionRequest => ({
  systemPrompt: 'Summarise.',
  messages: [{ role: 'user', content: 'the middle of a long conversation' }],
  tools: [],
  signal,
});

function models(): Provider[] {
  return [
    createProvider({ provider: 'openrouter', model: 'google/gemini-2.5-flash', apiKey: 'sk-or-1', baseUrl: router.url }),
    createProvider({ provider: 'vllm', model: 'qwen3-8b', baseUrl: local.url }),
    createProvider({ provider: 'anthropic', model: 'claude-haiku-4-5', apiKey: 'sk-ant-1', baseUrl: claude.url }),
  ];
}

describe('side-task fallback chain', () => {
  it('a 402 from the first model sends the same request to the next one, and says so', async () => {
    const seen: SideFallback[] = [];
    const chain = createFallbackProvider(models(), { onFallback: (e) => seen.push(e) });
    router.script({ error: { status: 402 } });
    local.script({ text: 'summary from the local model' });

    const result = await chain.complete(request());
    expect(result.message.content).toBe('summary from the local model');
    // The chain is named after its first model; the result names the one that answered (cost and usage labels).
    expect(chain.model).toBe('google/gemini-2.5-flash');
    expect(result.answeredBy).toEqual({ name: 'vllm', model: 'qwen3-8b' });
    expect(local.requests[0]!.body.messages).toEqual(router.requests[0]!.body.messages);
    expect(claude.requests).toHaveLength(0);
    expect(seen.map((e) => [e.from.model, e.to.model, e.error.status])).toEqual([['google/gemini-2.5-flash', 'qwen3-8b', 402]]);
    expect(seen[0]!.error.message).toContain('Insufficient credits');
  });

  it('an outage (500, then a connection refused) moves on across wire APIs to Claude', async () => {
    router.script({ error: { status: 500 } });
    await local.close(); // nothing listens there any more
    claude.script({ text: 'summary from claude' });
    const result = await createFallbackProvider(models()).complete(request());
    expect(result.message.content).toBe('summary from claude');
    expect(result.model).toContain('claude-haiku-4-5');
  });

  it('when every model fails, the last error is the answer', async () => {
    router.script({ error: { status: 402 } });
    local.script({ error: { status: 503 } });
    claude.script({ error: { status: 401 } });
    const err = await createFallbackProvider(models())
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe('auth');
    expect([router.requests.length, local.requests.length, claude.requests.length]).toEqual([1, 1, 1]);
  });

  it('a cancelled request is not handed to the next model', async () => {
    const controller = new AbortController();
    router.script({ text: 'slow words that never all arrive', chunkDelayMs: 60_000 });
    const pending = createFallbackProvider(models()).complete({ ...request(controller.signal), onTextDelta: () => controller.abort() });
    const err = await pending.catch((e: unknown) => e);
    expect((err as ProviderError).kind).toBe('aborted');
    expect(local.requests).toHaveLength(0);
    expect(claude.requests).toHaveLength(0);
  });

  it('one model is itself; the same model twice is tried once; no model at all is refused', async () => {
    const [first] = models();
    expect(createFallbackProvider([first!])).toBe(first);
    router.script({ error: { status: 402 } }, { text: 'never asked twice' });
    const err = await createFallbackProvider([first!, first!])
      .complete(request())
      .catch((e: unknown) => e);
    expect((err as ProviderError).status).toBe(402);
    expect(router.requests).toHaveLength(1);
    expect(() => createFallbackProvider([])).toThrow(/at least one provider/);
  });
});
