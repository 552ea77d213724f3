/**
 * The Anthropic adapter's authentication and thinking, through the real provider against the stand-in: OAuth
 * tokens (A13), reasoning effort as a thinking budget (C5), and a thinking signature the API refuses (I8).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import type { ChatMessage } from '../base/types.js';
import { createAnthropicProvider } from './anthropic.js';
import type { CompletionRequest, ProviderConfig } from './types.js';

const MODEL = 'claude-haiku-4-5';
const fakes: FakeLLM[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

async function fakeAnthropic(...args: Parameters<typeof startFakeAnthropic>): Promise<FakeLLM> {
  const fake = await startFakeAnthropic(...args);
  fakes.push(fake);
  return fake;
}

function request(messages: ChatMessage[] = [{ role: 'user', content: 'hello' }]): CompletionRequest {
  const tools = [{ name: 'lookup', description: 'look up', parameters: { type: 'object', properties: {} } }];
  return { systemPrompt: 'sys', messages, tools, signal: new AbortController().signal };
}

const provider = (fake: FakeLLM, extra: Partial<ProviderConfig> = {}) =>
  createAnthropicProvider({ provider: 'anthropic', model: MODEL, apiKey: 'sk-ant-api03-key', baseUrl: fake.url, ...extra });

describe('Anthropic OAuth tokens (A13)', () => {
  it('go as a bearer token with the oauth and interleaved-thinking betas, which the API requires of them', async () => {
    const token = 'sk-ant-oat01-subscription-token';
    const fake = await fakeAnthropic({ apiKey: token });
    const result = await provider(fake, { apiKey: token }).complete(request());

    expect(result.message.content).toBe('ok: hello');
    const sent = fake.requests[0]!.headers;
    expect(sent.authorization).toBe(`Bearer ${token}`);
    expect(sent['x-api-key']).toBeUndefined();
    expect(sent['anthropic-beta']?.split(',')).toEqual(['oauth-2025-04-20', 'interleaved-thinking-2025-05-14']);
  });

  it('an API key sends no OAuth beta', async () => {
    const fake = await fakeAnthropic();
    await provider(fake).complete(request());
    expect(fake.requests[0]!.headers['anthropic-beta']).toBeUndefined();
  });
});

describe('reasoning effort as an extended-thinking budget (C5)', () => {
  it('maps the effort to budget_tokens, with max_tokens above it, and keeps the thinking across a tool turn', async () => {
    const fake = await fakeAnthropic();
    const p = provider(fake, { reasoningEffort: 'high' });
    fake.script({ reasoning: 'I should look it up.', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: '{}' }] }, { text: 'Found it.' });
    const first = await p.complete(request());
    const history: ChatMessage[] = [{ role: 'user', content: 'hello' }, first.message, { role: 'tool', tool_call_id: 'toolu_1', content: 'result' }];
    const second = await p.complete(request(history));

    expect(second.message.content).toBe('Found it.');
    const body = fake.requests[0]!.body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 16_000 });
    expect(body.max_tokens).toBeGreaterThan(16_000);
    expect(fake.requests[0]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
  });

  it('each effort has its budget; none, or a model without extended thinking, leaves it off; an explicit budget wins', async () => {
    const fake = await fakeAnthropic();
    const budgetFor = async (extra: Partial<ProviderConfig>): Promise<unknown> => {
      await provider(fake, extra).complete(request());
      return fake.requests.at(-1)!.body.thinking;
    };
    expect(await budgetFor({ reasoningEffort: 'minimal' })).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(await budgetFor({ reasoningEffort: 'low' })).toEqual({ type: 'enabled', budget_tokens: 4_000 });
    expect(await budgetFor({ reasoningEffort: 'medium' })).toEqual({ type: 'enabled', budget_tokens: 8_000 });
    expect(await budgetFor({ reasoningEffort: 'xhigh' })).toEqual({ type: 'enabled', budget_tokens: 32_000 });
    expect(await budgetFor({ reasoningEffort: 'none' })).toBeUndefined();
    expect(await budgetFor({ reasoningEffort: 'high', model: 'claude-3-5-haiku-20241022' })).toBeUndefined();
    expect(await budgetFor({ reasoningEffort: 'high', thinkingBudget: 2048 })).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });
});

describe('a thinking signature the API refuses (I8)', () => {
  const foreign = (text: string | null, extra: Partial<ChatMessage> = {}): ChatMessage => ({
    role: 'assistant',
    content: text,
    reasoning: 'earlier thoughts',
    // Signed under another key or model (a fallback, a key rotation): this API cannot verify it.
    reasoning_details: [{ format: 'anthropic', model: MODEL, data: { type: 'thinking', thinking: 'earlier thoughts', signature: 'sig_from_elsewhere' } }],
    ...extra,
  });

  it('strips the thinking blocks and sends the request once more, thinking still on', async () => {
    const fake = await fakeAnthropic({ checkSignatures: true });
    const history: ChatMessage[] = [{ role: 'user', content: 'hi' }, foreign('Hello!'), { role: 'user', content: 'and now?' }];
    const result = await provider(fake, { thinkingBudget: 2048 }).complete(request(history));

    expect(result.message.content).toBe('ok: and now?');
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(fake.requests[0]!.body.messages)).toContain('sig_from_elsewhere');
    expect(JSON.stringify(fake.requests[1]!.body.messages)).not.toContain('"thinking"');
    expect(fake.requests[1]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('in a tool loop, the one retry goes without extended thinking (its last tool call has no thinking left)', async () => {
    const fake = await fakeAnthropic({ checkSignatures: true });
    const call = { id: 'toolu_9', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } };
    const history: ChatMessage[] = [
      { role: 'user', content: 'look it up' },
      foreign(null, { tool_calls: [call] }),
      { role: 'tool', tool_call_id: 'toolu_9', content: 'found' },
    ];
    fake.script({ text: 'It is found.' });
    const result = await provider(fake, { thinkingBudget: 2048 }).complete(request(history));

    expect(result.message.content).toBe('It is found.');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.body.thinking).toBeUndefined();
  });

  it('is tried once: a second refusal is the error the loop sees', async () => {
    const fake = await fakeAnthropic({ checkSignatures: true });
    fake.respondWith(() => ({ error: { status: 400, message: 'messages.1.content.0: Invalid `signature` in `thinking` block' } }));
    const history: ChatMessage[] = [{ role: 'user', content: 'hi' }, foreign('Hello!'), { role: 'user', content: 'again' }];
    await expect(provider(fake, { thinkingBudget: 2048 }).complete(request(history))).rejects.toMatchObject({ kind: 'format_error', status: 400 });
    expect(fake.requests).toHaveLength(2);
  });
});
