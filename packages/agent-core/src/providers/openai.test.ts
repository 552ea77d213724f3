import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FAKE_OPENAI_CONTEXT_LIMIT, startFakeOpenAI, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import type { ChatMessage } from '../base/types.js';
import { createOpenAIProvider } from './openai.js';
import { ProviderError, type CompletionRequest, type Provider, type ProviderErrorKind } from './types.js';

const KEY = 'sk-test-openai';
const MODEL = 'gpt-4.1-mini';

let fake: FakeLLM;
let provider: Provider;

beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY });
  provider = createOpenAIProvider({ provider: 'openai', model: MODEL, apiKey: KEY, baseUrl: fake.url });
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

describe('OpenAI provider: streaming', () => {
  it('streams text deltas in order and normalises usage (cached tokens split out)', async () => {
    fake.script({ text: 'Hello there, world!', usage: { input: 120, output: 9, cacheRead: 80 } });
    const deltas: string[] = [];
    const result = await provider.complete(request({ onTextDelta: (t) => deltas.push(t) }));

    expect(deltas).toEqual(['Hello ', 'there, ', 'world!']);
    expect(result.message).toEqual({ role: 'assistant', content: 'Hello there, world!', finish_reason: 'stop' });
    expect(result.finishReason).toBe('stop');
    // The API reports prompt_tokens = 200 including 80 cached: input is the uncached part.
    expect(result.usage).toEqual({ input: 120, output: 9, cacheRead: 80, cacheWrite: 0 });
    expect(result.model).toBe(MODEL);

    const sent = fake.requests[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toMatchObject({ model: MODEL, stream: true, stream_options: { include_usage: true } });
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You are Herald.' },
      { role: 'user', content: 'hello' },
    ]);
    expect(sent.body).not.toHaveProperty('tools');
  });

  it('assembles one tool call from its streamed fragments', async () => {
    fake.script({ toolCalls: [{ id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' }] });
    const result = await provider.complete(request());

    expect(result.finishReason).toBe('tool_calls');
    expect(result.message.content).toBeNull();
    expect(result.message.tool_calls).toEqual([
      { id: 'call_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } },
    ]);
  });

  it('assembles several tool calls by index, keeping text that came before them', async () => {
    const longArgs = JSON.stringify({ path: '/tmp/notes.txt', content: 'x'.repeat(200) });
    fake.script({
      text: 'Let me check.',
      toolCalls: [
        { id: 'call_a', name: 'read_file', arguments: '{"path":"/etc/hosts"}' },
        { id: 'call_b', name: 'write_file', arguments: longArgs },
        { name: 'list_dir', arguments: '' },
      ],
    });
    const result = await provider.complete(request());

    expect(result.message.content).toBe('Let me check.');
    const calls = result.message.tool_calls ?? [];
    expect(calls.map((c) => c.function.name)).toEqual(['read_file', 'write_file', 'list_dir']);
    expect(calls[0]!.id).toBe('call_a');
    expect(JSON.parse(calls[1]!.function.arguments)).toEqual(JSON.parse(longArgs));
    // A tool without parameters still gets valid JSON arguments.
    expect(calls[2]!.function.arguments).toBe('{}');
    expect(calls[2]!.id).toMatch(/^call_/);
  });

  it('normalises a truncated answer to length', async () => {
    fake.script({ text: 'The answer is', finish: 'length' });
    const result = await provider.complete(request({ maxTokens: 3 }));
    expect(result.finishReason).toBe('length');
    expect(result.message.finish_reason).toBe('length');
  });

  it('sends max_tokens to compatible servers (OpenAI itself gets max_completion_tokens)', async () => {
    await provider.complete(request({ maxTokens: 256 }));
    expect(fake.requests[0]!.body.max_tokens).toBe(256);
    expect(fake.requests[0]!.body).not.toHaveProperty('max_completion_tokens');
  });

  it.each(['reasoning_content', 'reasoning'] as const)('captures reasoning sent as %s', async (field) => {
    const reasoningFake = await startFakeOpenAI({ reasoningField: field });
    try {
      const p = createOpenAIProvider({ provider: 'openai', model: 'deepseek-reasoner', apiKey: 'k', baseUrl: reasoningFake.url });
      reasoningFake.script({ reasoning: 'The user greets me. I should greet back.', text: 'Hi!' });
      const thoughts: string[] = [];
      const result = await p.complete(request({ onReasoningDelta: (t) => thoughts.push(t) }));
      expect(thoughts.join('')).toBe('The user greets me. I should greet back.');
      expect(thoughts.length).toBeGreaterThan(1);
      expect(result.message.reasoning).toBe('The user greets me. I should greet back.');
      expect(result.message.content).toBe('Hi!');
    } finally {
      await reasoningFake.close();
    }
  });
});

describe('OpenAI provider: errors', () => {
  it.each<[string, { status: number; kind?: 'overloaded' | 'not_found' | 'too_large' | 'context_length' | 'server' }, ProviderErrorKind]>([
    ['500', { status: 500 }, 'server_error'],
    ['503 overloaded', { status: 503, kind: 'overloaded' }, 'overloaded'],
    ['404 model', { status: 404 }, 'model_not_found'],
    ['413', { status: 413 }, 'payload_too_large'],
  ])('classifies %s', async (_label, error, kind) => {
    fake.script({ error });
    const err = await failure(provider.complete(request()));
    expect(err.kind).toBe(kind);
    expect(err.status).toBe(error.status);
  });

  it('classifies 429 as rate_limit with the retry-after delay, without retrying itself', async () => {
    fake.script({ error: { status: 429, retryAfter: 7 } }, { text: 'would succeed on retry' });
    const err = await failure(provider.complete(request()));
    expect(err.kind).toBe('rate_limit');
    expect(err.retryAfterMs).toBe(7000);
    expect(fake.requests).toHaveLength(1);
  });

  it('classifies a wrong API key as auth', async () => {
    const wrong = createOpenAIProvider({ provider: 'openai', model: MODEL, apiKey: 'sk-wrong', baseUrl: fake.url });
    const err = await failure(wrong.complete(request()));
    expect(err.kind).toBe('auth');
    expect(err.status).toBe(401);
  });

  it('classifies context-length errors as context_overflow with the limit the body names', async () => {
    fake.script({ error: { status: 400, kind: 'context_length' } });
    const err = await failure(provider.complete(request()));
    expect(err.kind).toBe('context_overflow');
    expect(err.contextLimit).toBe(FAKE_OPENAI_CONTEXT_LIMIT);
  });

  it('rejects a history the API would refuse as format_error', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    ];
    const err = await failure(provider.complete(request({ messages })));
    expect(err.kind).toBe('format_error');
    expect(err.message).toContain('call_x');
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

  it('aborting while waiting for the first byte rejects with aborted', async () => {
    fake.script({ text: 'late', delayMs: 5_000 });
    const controller = new AbortController();
    const p = provider.complete(request({ signal: controller.signal }));
    await vi.waitFor(() => expect(fake.activeRequests()).toBe(1));
    controller.abort();
    expect((await failure(p)).kind).toBe('aborted');
    await vi.waitFor(() => expect(fake.requests[0]!.aborted).toBe(true));
  });

  it('gives up on a silent server after timeoutMs with kind timeout', async () => {
    const impatient = createOpenAIProvider({ provider: 'openai', model: MODEL, apiKey: KEY, baseUrl: fake.url, timeoutMs: 150 });
    fake.script({ text: 'too late', delayMs: 5_000 });
    const err = await failure(impatient.complete(request()));
    expect(err.kind).toBe('timeout');
    await vi.waitFor(() => expect(fake.requests[0]!.aborted).toBe(true));
  });

  it('reports an unreachable server as a retryable server_error', async () => {
    const url = fake.url;
    await fake.close();
    const offline = createOpenAIProvider({ provider: 'openai', model: MODEL, apiKey: KEY, baseUrl: url });
    const err = await failure(offline.complete(request()));
    expect(err.kind).toBe('server_error');
    fake = await startFakeOpenAI(); // afterEach closes it
  });
});

describe('OpenAI provider: message conversion', () => {
  it('sends history in Chat Completions shape, dropping our own fields', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        reasoning: 'two cities, two calls',
        finish_reason: 'tool_calls',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', tool_name: 'get_weather', content: '18°C' },
      { role: 'tool', tool_call_id: 'call_2', tool_name: 'get_weather', content: '24°C' },
      { role: 'assistant', content: 'Paris 18°C, Rome 24°C.', finish_reason: 'stop' },
      { role: 'user', content: 'thanks' },
    ];
    const tools = [
      { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    ];
    const result = await provider.complete(request({ messages, tools }));
    expect(result.message.content).toBe('ok: thanks');

    const body = fake.requests[0]!.body;
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are Herald.' },
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'call_2', content: '24°C' },
      { role: 'assistant', content: 'Paris 18°C, Rome 24°C.' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(body.tools).toEqual([{ type: 'function', function: tools[0] }]);
  });

  it('sends a tool schema as it is at each request, also when it changed after the first', async () => {
    const parameters = { type: 'object', properties: {} };
    const schema = { name: 'lookup', description: 'Looks things up', parameters };
    await provider.complete(request({ tools: [schema] }));
    await provider.complete(request({ tools: [schema] }));
    schema.description = 'Looks things up, now in more places';
    await provider.complete(request({ tools: [schema] }));
    expect(fake.requests.map((r) => r.body.tools)).toEqual([
      [{ type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters } }],
      [{ type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters } }],
      [{ type: 'function', function: { name: 'lookup', description: 'Looks things up, now in more places', parameters } }],
    ]);
  });

  it("sends a user message's images as image_url data-URL parts after its text; a model without vision gets the text only", async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
    const messages: ChatMessage[] = [{ role: 'user', content: 'what is this?\n[Image: dot.png]', images: [{ mimeType: 'image/png', data: png }] }];
    await provider.complete(request({ messages }));
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'You are Herald.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?\n[Image: dot.png]' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
    ]);
    const blind = createOpenAIProvider({ provider: 'openai', model: 'gpt-3.5-turbo', apiKey: KEY, baseUrl: fake.url });
    expect(blind.vision).toBe(false);
    await blind.complete(request({ messages }));
    expect((fake.requests[1]!.body.messages as unknown[])[1]).toEqual({ role: 'user', content: 'what is this?\n[Image: dot.png]' });
  });

  it('round-trips its own answer: a tool-call reply sent back with results is accepted', async () => {
    fake.script({ toolCalls: [{ name: 'clock', arguments: '{}' }] }, { text: 'It is noon.' });
    const first = await provider.complete(request());
    const history: ChatMessage[] = [
      { role: 'user', content: 'hello' },
      first.message,
      { role: 'tool', tool_call_id: first.message.tool_calls![0]!.id, content: '12:00' },
    ];
    const second = await provider.complete(request({ messages: history }));
    expect(second.message.content).toBe('It is noon.');
  });
});
