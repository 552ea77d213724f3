/**
 * Agent-loop behaviours ported from Hermes (issue 27), through the real OpenAI and Anthropic SDKs against the
 * local stand-ins: the output length limit, and max_tokens lowered from an "input + max_tokens > limit" error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createProvider, runConversation, type ConversationOptions, type Provider, type ProviderName, type Tool } from '@herald/agent-core';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';

const API_KEY = 'test-key';
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 };

const lookup = (log: string[]): Tool => ({
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  readOnly: true,
  execute: async (args) => {
    log.push(String(args.q));
    return `found ${String(args.q)}`;
  },
});

/** The output limit a request asked for, whichever field its API uses. */
const maxTokensOf = (req: RecordedRequest): unknown => req.body.max_tokens ?? req.body.max_completion_tokens;

describe.each<ProviderName>(['openai', 'anthropic'])('length handling over %s', (kind) => {
  const fakes: FakeLLM[] = [];
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });

  async function setUp(model: string): Promise<{ fake: FakeLLM; provider: Provider }> {
    const fake = await (kind === 'openai' ? startFakeOpenAI : startFakeAnthropic)({ apiKey: API_KEY });
    fakes.push(fake);
    return { fake, provider: createProvider({ provider: kind, model, apiKey: API_KEY, baseUrl: fake.url }) };
  }

  const converse = (provider: Provider, extra: Partial<ConversationOptions>) =>
    runConversation({ userMessage: 'Weather?', history: [], systemPrompt: 'S', provider, retry: FAST_RETRY, ...extra });

  it('a tool call cut off by max_tokens is asked again with twice the room, and only the whole call runs', async () => {
    const { fake, provider } = await setUp(kind === 'openai' ? 'gpt-5-mini' : 'claude-sonnet-4-6');
    fake.script(
      { toolCalls: [{ id: 'call_cut', name: 'lookup', arguments: '{"q":"wea' }], finish: 'length' },
      { toolCalls: [{ id: 'call_ok', name: 'lookup', arguments: '{"q":"weather"}' }] },
      { text: 'Sunny.' },
    );
    const log: string[] = [];
    const r = await converse(provider, { tools: [lookup(log)], maxTokens: 2048 });
    expect(r.finalResponse).toBe('Sunny.');
    expect(log).toEqual(['weather']);
    expect(fake.requests.map(maxTokensOf)).toEqual([2048, 4096, 4096]);
    expect(JSON.stringify(fake.requests[2].body)).not.toContain('call_cut');
  });

  it('"input + max_tokens > limit": the next request asks for the room left, and nothing is compressed', async () => {
    const { fake, provider } = await setUp(kind === 'openai' ? 'gpt-5-mini' : 'claude-sonnet-4-5');
    const message =
      kind === 'openai'
        ? "This model's maximum context length is 128000 tokens. However, you requested 136384 tokens (120000 in the messages, 16384 in the completion). Please reduce the length of the messages or completion."
        : 'input length and `max_tokens` exceed context limit: 120000 + 16384 > 128000, decrease input length or `max_tokens` and try again';
    fake.script({ error: { status: 400, kind: 'context_length', message } }, { text: 'Fits now.' });
    let compressed = false;
    const r = await converse(provider, { maxTokens: 16_384, onContextOverflow: async () => ((compressed = true), null) });
    expect(r.finalResponse).toBe('Fits now.');
    expect(compressed).toBe(false);
    expect(fake.requests.map(maxTokensOf)).toEqual([16_384, 8000]);
  });

  it('a stream that stalls after some text is continued from that text, not asked again from the start', async () => {
    const { fake } = await setUp('m');
    const provider = createProvider({ provider: kind, model: 'm', apiKey: API_KEY, baseUrl: fake.url, stallTimeoutMs: 300 });
    fake.script({ text: 'one two three four five six', stallAfterEvents: 4 }, { text: ' and the rest.' });
    const deltas: string[] = [];
    const r = await converse(provider, { onEvent: (e) => void (e.type === 'text_delta' && deltas.push(e.text)) });
    // What the user saw streaming is exactly the answer: the first part once, then the rest.
    expect(r.finalResponse).toBe(deltas.join(''));
    expect(r.finalResponse).toMatch(/^one .* and the rest\.$/);
    const before = r.finalResponse.slice(0, -' and the rest.'.length);
    expect(r.completed).toBe(true);
    // The second request carries the text so far and asks for the rest.
    expect(JSON.stringify(fake.requests[1].body)).toContain(JSON.stringify(before).slice(1, -1));
    expect(JSON.stringify(fake.requests[1].body)).toContain('continue exactly where you left off');
  });
});

describe('reasoning models', () => {
  const fakes: FakeLLM[] = [];
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });

  it('Anthropic extended thinking: the budget is asked for, and thinking blocks go back with their signatures in the tool loop', async () => {
    const fake = await startFakeAnthropic({ apiKey: API_KEY });
    fakes.push(fake);
    const provider = createProvider({ provider: 'anthropic', model: 'claude-sonnet-4-6', apiKey: API_KEY, baseUrl: fake.url, thinkingBudget: 2048 });
    fake.script(
      { reasoning: 'I should look it up.', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"q":"w"}' }] },
      { reasoning: 'Now answer.', text: 'Sunny.' },
    );
    const log: string[] = [];
    const r = await runConversation({ userMessage: 'Weather?', history: [], systemPrompt: 'S', provider, tools: [lookup(log)], retry: FAST_RETRY });
    expect(r.finalResponse).toBe('Sunny.');
    expect(fake.requests[0].body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(fake.requests[0].body.max_tokens as number).toBeGreaterThan(2048);
    // The stand-in refuses a tool loop whose assistant message does not start with its signed thinking block.
    const assistant = (fake.requests[1].body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>)[1];
    expect(assistant.content[0]).toMatchObject({ type: 'thinking', thinking: 'I should look it up.', signature: expect.stringMatching(/^sig_/) });
    // Stored for the next turns, never in the text.
    expect(r.newMessages[1].reasoning_details?.[0]).toMatchObject({ format: 'anthropic', data: { type: 'thinking', thinking: 'I should look it up.' } });
    expect(r.newMessages.map((m) => m.content ?? '').join(' ')).not.toContain('look it up');
  });

  it('OpenAI-compatible servers: <think> in the content is split out as it streams and kept as reasoning; reasoning_effort is sent', async () => {
    const fake = await startFakeOpenAI({ apiKey: API_KEY });
    fakes.push(fake);
    const provider = createProvider({ provider: 'openai', model: 'qwen3:8b', apiKey: API_KEY, baseUrl: fake.url, reasoningEffort: 'low' });
    fake.script({ text: '<think>The user greets me. I greet back.</think>\n\nHello there!' });
    const deltas: string[] = [];
    const reasoning: string[] = [];
    const r = await runConversation({
      userMessage: 'Hi',
      history: [],
      systemPrompt: 'S',
      provider,
      retry: FAST_RETRY,
      onEvent: (e) => void (e.type === 'text_delta' ? deltas.push(e.text) : e.type === 'reasoning_delta' ? reasoning.push(e.text) : undefined),
    });
    expect(r.finalResponse).toBe('Hello there!');
    expect(deltas.join('')).toBe('Hello there!');
    expect(reasoning.join('')).toBe('The user greets me. I greet back.');
    expect(r.newMessages[1]).toMatchObject({ content: 'Hello there!', reasoning: 'The user greets me. I greet back.' });
    expect(fake.requests[0].body.reasoning_effort).toBe('low');
  });
});

describe('DeepSeek-style reasoning_content', () => {
  it('goes back on the tool-call turn it came with (thinking mode requires it), never on plain answers', async () => {
    const fake = await startFakeOpenAI({ apiKey: API_KEY, reasoningField: 'reasoning_content' });
    const provider = createProvider({ provider: 'openai', model: 'deepseek-v4-flash', apiKey: API_KEY, baseUrl: fake.url });
    try {
      fake.script(
        { reasoning: 'Need the weather.', toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"w"}' }] },
        { reasoning: 'Got it.', text: 'Sunny.' },
      );
      const r = await runConversation({ userMessage: 'Weather?', history: [], systemPrompt: 'S', provider, tools: [lookup([])], retry: FAST_RETRY });
      expect(r.finalResponse).toBe('Sunny.');
      const sent = fake.requests[1].body.messages as Array<Record<string, unknown>>;
      expect(sent.find((m) => m.role === 'assistant')).toMatchObject({
        reasoning_content: 'Need the weather.',
        tool_calls: [expect.objectContaining({ id: 'call_1' })],
      });
      // The next turn: the plain answer's reasoning stays out, the tool turn's goes back again.
      fake.script({ text: 'Bye.' });
      await runConversation({ userMessage: 'Thanks', history: r.newMessages, systemPrompt: 'S', provider, tools: [lookup([])], retry: FAST_RETRY });
      const next = (fake.requests[2].body.messages as Array<Record<string, unknown>>).filter((m) => m.role === 'assistant');
      expect(next.map((m) => m.reasoning_content)).toEqual(['Need the weather.', undefined]);
    } finally {
      await fake.close();
    }
  });
});
