import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FAKE_ANTHROPIC_CONTEXT_LIMIT, startFakeAnthropic, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import type { ChatMessage } from '../base/types.js';
import { createAnthropicProvider } from './anthropic.js';
import { ProviderError, type CompletionRequest, type Provider, type ProviderErrorKind } from './types.js';

const KEY = 'sk-ant-test';
// Not claude-sonnet-4-5: the installed SDK prints a deprecation warning for it on every call.
const MODEL = 'claude-haiku-4-5';

let fake: FakeLLM;
let provider: Provider;

beforeEach(async () => {
  fake = await startFakeAnthropic({ apiKey: KEY });
  provider = createAnthropicProvider({ provider: 'anthropic', model: MODEL, apiKey: KEY, baseUrl: fake.url });
});
afterEach(async () => {
  await fake.close();
});

function request(overrides: Partial<CompletionRequest> = {}): CompletionRequest {
  return {
    systemPrompt: 'You are Herald.',
    messages: [{ role: 'user', content: 'hello' }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

describe('Anthropic provider: streaming', () => {
  it('streams text deltas in order and reports all four usage counters', async () => {
    fake.script({ text: 'Hello there, world!', usage: { input: 50, output: 9, cacheRead: 1500, cacheWrite: 300 } });
    const deltas: string[] = [];
    const result = await provider.complete(request({ onTextDelta: (t) => deltas.push(t) }));

    expect(deltas).toEqual(['Hello ', 'there, ', 'world!']);
    expect(result.message).toEqual({ role: 'assistant', content: 'Hello there, world!', finish_reason: 'stop' });
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toEqual({ input: 50, output: 9, cacheRead: 1500, cacheWrite: 300 });
    expect(result.model).toBe(MODEL);

    const sent = fake.requests[0]!;
    expect(sent.headers['anthropic-version']).toBeTruthy();
    expect(sent.body).toMatchObject({ model: MODEL, stream: true, max_tokens: 16_384 });
    // The system prompt is a cached block so every call in a session hits the prompt cache.
    expect(sent.body.system).toEqual([{ type: 'text', text: 'You are Herald.', cache_control: { type: 'ephemeral' } }]);
  });

  it('assembles a tool call from input_json_delta fragments', async () => {
    fake.script({ toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' }] });
    const result = await provider.complete(request());
    expect(result.finishReason).toBe('tool_calls');
    expect(result.message.content).toBeNull();
    expect(result.message.tool_calls).toEqual([call('toolu_1', 'get_weather', '{"city":"Paris","unit":"celsius"}')]);
  });

  it('assembles several tool calls, each from its own content block', async () => {
    const longArgs = JSON.stringify({ path: '/tmp/notes.txt', content: 'y'.repeat(150) });
    fake.script({
      text: 'Working on it.',
      toolCalls: [
        { id: 'toolu_a', name: 'read_file', arguments: '{"path":"/etc/hosts"}' },
        { id: 'toolu_b', name: 'write_file', arguments: longArgs },
      ],
    });
    const result = await provider.complete(request());
    expect(result.message.content).toBe('Working on it.');
    expect(result.message.tool_calls).toEqual([call('toolu_a', 'read_file', '{"path":"/etc/hosts"}'), call('toolu_b', 'write_file', longArgs)]);
  });

  it('normalises max_tokens to length', async () => {
    fake.script({ text: 'The answer is', finish: 'length' });
    const result = await provider.complete(request({ maxTokens: 3 }));
    expect(result.finishReason).toBe('length');
    expect(fake.requests[0]!.body.max_tokens).toBe(3);
  });

  it('captures thinking as reasoning', async () => {
    fake.script({ reasoning: 'The user greets me. I should greet back.', text: 'Hi!' });
    const thoughts: string[] = [];
    const result = await provider.complete(request({ onReasoningDelta: (t) => thoughts.push(t) }));
    expect(thoughts.join('')).toBe('The user greets me. I should greet back.');
    expect(thoughts.length).toBeGreaterThan(1);
    expect(result.message.reasoning).toBe('The user greets me. I should greet back.');
    expect(result.message.content).toBe('Hi!');
  });

  it('caps the default max_tokens at the model output limit', async () => {
    const small = createAnthropicProvider({ provider: 'anthropic', model: 'claude-3-5-haiku-20241022', apiKey: KEY, baseUrl: fake.url });
    await small.complete(request());
    expect(fake.requests[0]!.body.max_tokens).toBe(8_192);
  });
});

describe('Anthropic provider: errors', () => {
  it.each<[string, { status: number; kind?: 'context_length' }, ProviderErrorKind]>([
    ['500', { status: 500 }, 'server_error'],
    ['529 overloaded', { status: 529 }, 'overloaded'],
    ['404 model', { status: 404 }, 'model_not_found'],
    ['413', { status: 413 }, 'payload_too_large'],
  ])('classifies %s', async (_label, error, kind) => {
    fake.script({ error });
    const err = await failure(provider.complete(request()));
    expect(err.kind).toBe(kind);
    expect(err.status).toBe(error.status);
  });

  it('classifies 429 as rate_limit with the retry-after delay, without retrying itself', async () => {
    fake.script({ error: { status: 429, retryAfter: 12 } }, { text: 'would succeed on retry' });
    const err = await failure(provider.complete(request()));
    expect(err.kind).toBe('rate_limit');
    expect(err.retryAfterMs).toBe(12_000);
    expect(fake.requests).toHaveLength(1);
  });

  it('classifies a wrong API key as auth', async () => {
    const wrong = createAnthropicProvider({ provider: 'anthropic', model: MODEL, apiKey: 'sk-ant-wrong', baseUrl: fake.url });
    const err = await failure(wrong.complete(request()));
    expect(err.kind).toBe('auth');
    expect(err.status).toBe(401);
  });

  it('classifies "prompt is too long" as context_overflow with the limit parsed', async () => {
    fake.script({ error: { status: 400, kind: 'context_length' } });
    const err = await failure(provider.complete(request()));
    expect(err.kind).toBe('context_overflow');
    expect(err.contextLimit).toBe(FAKE_ANTHROPIC_CONTEXT_LIMIT);
  });

  it('aborting mid-stream rejects with aborted and closes the HTTP stream', async () => {
    fake.script({ text: 'one two three four five six seven eight', chunkDelayMs: 30 });
    const controller = new AbortController();
    const seen: string[] = [];
    const p = provider.complete(
      request({
        signal: controller.signal,
        onTextDelta: (t) => {
          seen.push(t);
          if (seen.length === 2) controller.abort();
        },
      }),
    );
    const err = await failure(p);
    expect(err.kind).toBe('aborted');
    expect(seen).toHaveLength(2);
    await vi.waitFor(() => expect(fake.requests[0]!.aborted).toBe(true));
    expect(fake.activeRequests()).toBe(0);
  });

  it('gives up on a stream that goes silent after timeoutMs with kind timeout', async () => {
    const impatient = createAnthropicProvider({ provider: 'anthropic', model: MODEL, apiKey: KEY, baseUrl: fake.url, timeoutMs: 150 });
    // The first delta arrives promptly, then the stream stalls: only an idle watchdog catches this.
    fake.script({ text: 'one two', chunkDelayMs: 5_000 });
    const deltas: string[] = [];
    const err = await failure(impatient.complete(request({ onTextDelta: (t) => deltas.push(t) })));
    expect(err.kind).toBe('timeout');
    expect(deltas).toEqual(['one ']);
    await vi.waitFor(() => expect(fake.requests[0]!.aborted).toBe(true));
  });
});

describe('Anthropic provider: message conversion', () => {
  const tools = [{ name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];

  it('merges consecutive tool results and the next user text into one user message', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking both.',
        reasoning: 'two cities',
        finish_reason: 'tool_calls',
        tool_calls: [call('toolu_1', 'get_weather', '{"city":"Paris"}'), call('toolu_2', 'get_weather', 'not json')],
      },
      { role: 'tool', tool_call_id: 'toolu_1', tool_name: 'get_weather', content: '18°C' },
      { role: 'tool', tool_call_id: 'toolu_2', tool_name: 'get_weather', content: '24°C' },
      { role: 'user', content: 'also, hurry' },
    ];
    const result = await provider.complete(request({ messages, tools }));
    // The fake enforces alternation and tool_use/tool_result pairing exactly as the API does.
    expect(result.message.content).toBe('ok: also, hurry');

    const body = fake.requests[0]!.body;
    expect(body.tools).toEqual([{ name: 'get_weather', description: 'Current weather', input_schema: tools[0]!.parameters }]);
    const ephemeral = { type: 'ephemeral' };
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          // Arguments that are not JSON are sent as {} rather than failing the whole turn.
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {}, cache_control: ephemeral },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: '24°C' },
          { type: 'text', text: 'also, hurry', cache_control: ephemeral },
        ],
      },
    ]);
  });

  it("sends a user message's images as base64 image blocks after its text", async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
    const messages: ChatMessage[] = [{ role: 'user', content: 'what is this?', images: [{ mimeType: 'image/png', data: png }] }];
    await provider.complete(request({ messages }));
    expect(fake.requests[0]!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          // The image is this turn's only (never stored): the text before it ends a prefix the next turn reads.
          { type: 'text', text: 'what is this?', cache_control: { type: 'ephemeral' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png }, cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
    // The stand-in checks the bytes against the declared type, as the API does.
    const lying: ChatMessage[] = [{ role: 'user', content: 'and this?', images: [{ mimeType: 'image/jpeg', data: png }] }];
    await expect(provider.complete(request({ messages: lying }))).rejects.toMatchObject({ kind: 'format_error' });
  });

  it('keeps roles alternating when the history has an empty assistant reply', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'second' },
    ];
    const result = await provider.complete(request({ messages }));
    expect(result.message.content).toBe('ok: firstsecond');
    const sent = fake.requests[0]!.body.messages as { role: string; content: unknown[] }[];
    expect(sent.map((m) => m.role)).toEqual(['user']);
    expect(sent[0]!.content).toHaveLength(2);
  });

  it('round-trips its own answer: tool calls sent back with their results are accepted', async () => {
    fake.script(
      {
        reasoning: 'need the clock',
        toolCalls: [
          { name: 'clock', arguments: '{}' },
          { name: 'calendar', arguments: '{"day":1}' },
        ],
      },
      { text: 'It is noon.' },
    );
    const first = await provider.complete(request());
    const [a, b] = first.message.tool_calls!;
    const history: ChatMessage[] = [
      { role: 'user', content: 'hello' },
      first.message,
      { role: 'tool', tool_call_id: a!.id, content: '12:00' },
      { role: 'tool', tool_call_id: b!.id, content: 'Monday' },
    ];
    // The real API refuses tool blocks in history unless tools are defined; the stand-in does too.
    const tools = ['clock', 'calendar'].map((name) => ({ name, description: name, parameters: { type: 'object', properties: {} } }));
    await expect(provider.complete(request({ messages: history }))).rejects.toMatchObject({ kind: 'format_error' });
    const second = await provider.complete(request({ messages: history, tools }));
    expect(second.message.content).toBe('It is noon.');
    const sentAssistant = (fake.requests[2]!.body.messages as { content: { type: string }[] }[])[1]!;
    // Thinking without a kept signature is not sent back.
    expect(sentAssistant.content.map((c) => c.type)).toEqual(['tool_use', 'tool_use']);
  });
});

describe('Anthropic provider: prompt cache breakpoints', () => {
  it("ends the person's own words with a breakpoint when the saved notes follow: the next turn reads through them", async () => {
    const cached = await startFakeAnthropic({ apiKey: KEY, promptCache: true });
    try {
      const p = createAnthropicProvider({ provider: 'anthropic', model: MODEL, apiKey: KEY, baseUrl: cached.url });
      const systemPrompt = 'You are Herald. '.repeat(600);
      const notes = '<memory>\nThe team deploys on Tuesdays.\n</memory>';
      const question = (n: number): string => `Question ${n}: ${'about the deploy '.repeat(60)}`;
      const latest = (n: number): ChatMessage => ({ role: 'user', content: `${question(n)}\n\n${notes}`, requestContextAt: question(n).length });
      await p.complete(request({ systemPrompt, messages: [latest(1)] }));
      // The next turn: the first question as stored (no notes), the answer, and the new question with the notes.
      const answer: ChatMessage = { role: 'assistant', content: `Answer 1: ${'deploys go out on Tuesdays '.repeat(40)}` };
      await p.complete(request({ systemPrompt, messages: [{ role: 'user', content: question(1) }, answer, latest(2)] }));

      const [first, second] = cached.requests;
      expect((first!.body.messages as Array<{ content: unknown }>)[0]!.content).toEqual([
        { type: 'text', text: question(1), cache_control: { type: 'ephemeral' } },
        { type: 'text', text: `\n\n${notes}`, cache_control: { type: 'ephemeral' } },
      ]);
      // Read: everything up to the first question; new: the answer, the second question and the notes.
      const throughQuestion = first!.cache!.total - Math.ceil(JSON.stringify({ type: 'text', text: `\n\n${notes}` }).length / 4);
      expect(second!.cache!.cacheRead).toBeGreaterThanOrEqual(throughQuestion - 1);
      expect(second!.cache!.cacheRead).toBeLessThanOrEqual(throughQuestion + 1);
    } finally {
      await cached.close();
    }
  });
});
