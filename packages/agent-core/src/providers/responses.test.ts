/**
 * The Responses API provider through the real openai SDK against the stand-in's /v1/responses: streaming text,
 * a tool round trip with encrypted reasoning replayed, usage with cached tokens, errors, and the loop's retry.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import { runConversation } from '../loop/run-conversation.js';
import type { Tool } from '../tools/registry.js';
import { createProvider } from './resolve.js';
import { ProviderError, type CompletionRequest, type Provider } from './types.js';

const KEY = 'sk-test-responses';
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, random: () => 0 };

let fake: FakeLLM;
let provider: Provider;

beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY });
  provider = createProvider({ provider: 'openai-responses', model: 'o4-mini', apiKey: KEY, baseUrl: fake.url });
});
afterEach(async () => {
  await fake.close();
});

function request(overrides: Partial<CompletionRequest> = {}): CompletionRequest {
  return { systemPrompt: 'You are Herald.', messages: [{ role: 'user', content: 'hello' }], tools: [], signal: new AbortController().signal, ...overrides };
}

const lookup: Tool = {
  name: 'lookup',
  description: 'Looks a word up',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  readOnly: true,
  execute: async (args) => `definition of ${String(args.q)}`,
};

describe('Responses provider', () => {
  it('streams text and reports usage with the cached tokens split out', async () => {
    fake.script({ text: 'Hello there, world!', usage: { input: 100, output: 7, cacheRead: 60 } });
    const deltas: string[] = [];
    const result = await provider.complete(request({ onTextDelta: (t) => deltas.push(t), cacheKey: 'session-1' }));

    expect(deltas.join('')).toBe('Hello there, world!');
    expect(deltas.length).toBeGreaterThan(1);
    expect(result.finishReason).toBe('stop');
    expect(result.message.content).toBe('Hello there, world!');
    expect(result.usage).toEqual({ input: 100, output: 7, cacheRead: 60, cacheWrite: 0 });

    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.body).toMatchObject({
      model: 'o4-mini',
      instructions: 'You are Herald.',
      input: [{ role: 'user', content: 'hello' }],
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'session-1',
    });
  });

  it('runs a tool round trip and replays the encrypted reasoning item with the next request', async () => {
    fake.script(
      { reasoning: 'I should look it up', toolCalls: [{ id: 'call_a', name: 'lookup', arguments: '{"q":"herald"}' }] },
      { text: 'A herald brings news.' },
    );
    const result = await runConversation({ userMessage: 'What is a herald?', history: [], systemPrompt: 'S', provider, tools: [lookup], retry: FAST_RETRY });

    expect(result.finalResponse).toBe('A herald brings news.');
    const assistant = result.newMessages[1]!;
    expect(assistant.tool_calls?.[0]).toMatchObject({ id: 'call_a', function: { name: 'lookup', arguments: '{"q":"herald"}' } });
    expect(assistant.reasoning).toBe('I should look it up');
    expect(assistant.reasoning_details?.[0]).toMatchObject({ format: 'openai-responses', model: 'o4-mini' });

    const second = fake.requests[1]!.body.input as Record<string, unknown>[];
    expect(second.map((i) => i.type ?? i.role)).toEqual(['user', 'reasoning', 'function_call', 'function_call_output']);
    expect(second[1]).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^gAAAAB/) });
    expect(second[3]).toEqual({ type: 'function_call_output', call_id: 'call_a', output: 'definition of herald' });
  });

  it('leaves out another model’s encrypted reasoning instead of sending what that model cannot read', async () => {
    fake.script({ text: 'fine' });
    await provider.complete(
      request({
        messages: [
          { role: 'user', content: 'a' },
          {
            role: 'assistant',
            content: 'b',
            reasoning_details: [{ format: 'openai-responses', model: 'o3', data: { id: 'rs_1', summary: [], encrypted_content: 'gAAAAB...' } }],
          },
          { role: 'user', content: 'c' },
        ],
      }),
    );
    expect((fake.requests[0]!.body.input as unknown[]).length).toBe(3);
  });

  it('maps a truncated response (response.incomplete) to finish reason length', async () => {
    fake.script({ text: 'cut off here', finish: 'length' });
    const result = await provider.complete(request());
    expect(result.finishReason).toBe('length');
    expect(result.message.content).toBe('cut off here');
  });

  it('classifies errors: a 429 is rate_limit with its Retry-After, a bad key is auth', async () => {
    fake.script({ error: { status: 429, retryAfter: 7 } });
    const limited = await provider.complete(request()).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ProviderError);
    expect(limited).toMatchObject({ kind: 'rate_limit', retryAfterMs: 7000 });

    const wrongKey = createProvider({ provider: 'openai-responses', model: 'gpt-4.1', apiKey: 'sk-wrong', baseUrl: fake.url });
    await expect(wrongKey.complete(request())).rejects.toMatchObject({ kind: 'auth', status: 401 });
  });

  it('the loop retries a 500 and then answers', async () => {
    fake.script({ error: { status: 500 } }, { text: 'recovered' });
    const result = await runConversation({ userMessage: 'hi', history: [], systemPrompt: 'S', provider, retry: FAST_RETRY });
    expect(result.finalResponse).toBe('recovered');
    expect(result.apiCalls).toBe(2);
  });

  it('a non-reasoning model is asked for no encrypted reasoning', async () => {
    const plain = createProvider({ provider: 'openai', apiMode: 'responses', model: 'gpt-4.1-mini', apiKey: KEY, baseUrl: fake.url });
    fake.script({ text: 'ok' });
    await plain.complete(request());
    expect(fake.requests[0]!.body).not.toHaveProperty('include');
    expect(fake.requests[0]!.path).toBe('/v1/responses');
  });
});
