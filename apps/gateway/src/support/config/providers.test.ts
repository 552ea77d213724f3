/**
 * The provider catalog: several named OpenAI-compatible endpoints at once, each with its own base URL and key
 * pool, in one fallback chain; cache markers for Claude through a router; clear errors for what is missing.
 * Through the real openai SDK against the stand-ins.
 */
import { createProvider, runConversation } from '@herald/agent-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest } from '../../../../../test/fakes/llm/index.js';
import { loadConfig } from './load.js';
import { ModelNotConfiguredError, ProviderCatalog } from './providers.js';

let router: FakeLLM;
let local: FakeLLM;
beforeEach(async () => {
  [router, local] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
});
afterEach(async () => {
  await Promise.all([router.close(), local.close()]);
});

const keyOf = (r: RecordedRequest): string => r.headers.authorization?.replace(/^Bearer /, '') ?? '';

function catalog(extra: Record<string, string> = {}): ProviderCatalog {
  const config = loadConfig({
    file: null,
    env: {
      HERALD_ENDPOINTS: JSON.stringify([
        { name: 'openrouter', base_url: router.url },
        { name: 'local-vllm', base_url: local.url, cache_markers: false },
      ]),
      OPENROUTER_API_KEY: 'sk-or-first-0001',
      OPENROUTER_API_KEY_2: 'sk-or-second-002',
      HERALD_STREAM_STALL_TIMEOUT_MS: '1234',
      ...extra,
    },
  });
  return new ProviderCatalog(config);
}

describe('named endpoints', () => {
  it('each endpoint has its own address and key pool: a 402 on one router key rotates to its second key inside the call', async () => {
    const c = catalog();
    const claude = createProvider(c.configFor('openrouter:anthropic/claude-sonnet-4.5'));
    router.script({ error: { status: 402 } }, { text: 'paid by the second key' });
    const result = await claude.complete({
      systemPrompt: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      signal: new AbortController().signal,
    });
    expect(result.message.content).toBe('paid by the second key');
    expect(router.requests.map(keyOf)).toEqual(['sk-or-first-0001', 'sk-or-second-002']);
    // Claude through the router: Anthropic cache markers on the system prompt and the last message.
    const body = router.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(body.messages[0]!.content)).toContain('"cache_control":{"type":"ephemeral"}');
    expect(JSON.stringify(body.messages.at(-1)!.content)).toContain('"cache_control":{"type":"ephemeral"}');
    const status = await c.status();
    expect(status.find((p) => p.pool === 'openrouter')!.keys.map((k) => k.state)).toEqual(['cooling', 'ready']);
  });

  it('a fallback chain across endpoints: the local server refuses the model, the router answers', async () => {
    const c = catalog();
    const [primary, fallback] = ['local-vllm:qwen3-8b', 'openrouter:qwen/qwen3-235b'].map((ref) => createProvider(c.configFor(ref)));
    local.script({ error: { status: 404 } });
    router.script({ text: 'from the router' });
    const result = await runConversation({
      userMessage: 'hi',
      history: [],
      systemPrompt: 'S',
      provider: primary!,
      fallbacks: [fallback!],
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
    });
    expect(result.finalResponse).toBe('from the router');
    expect(local.requests[0]!.body.model).toBe('qwen3-8b');
    expect(keyOf(local.requests[0]!)).toBe('not-needed'); // a local server needs no key
    expect(router.requests[0]!.body.model).toBe('qwen/qwen3-235b');
  });

  it('passes the stream settings on and honours cache_markers: false', () => {
    const c = catalog();
    expect(c.configFor('local-vllm:claude-lookalike')).toMatchObject({ baseUrl: local.url, stallTimeoutMs: 1234, cacheMarkers: false });
    expect(c.configFor('openrouter:anthropic/claude-sonnet-4.5').cacheMarkers).toBeUndefined(); // decided by model and host
  });

  it('an unknown endpoint or a hosted provider without a key is refused, naming what to set', () => {
    const c = catalog();
    expect(() => c.configFor('nowhere:m')).toThrow(ModelNotConfiguredError);
    expect(() => c.configFor('nowhere:m')).toThrow(
      'HERALD_ENDPOINTS: no endpoint named "nowhere" for nowhere:m (known: openai, openai-responses, anthropic, bedrock, openrouter, local-vllm)',
    );
    expect(() => c.configFor('anthropic:claude-haiku-4-5')).toThrow('ANTHROPIC_API_KEY: must be set to use anthropic:claude-haiku-4-5');
  });
});
