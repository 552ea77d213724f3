/**
 * The Bedrock Converse provider through the real @aws-sdk/client-bedrock-runtime against the stand-in's
 * binary event stream: text, a tool round trip, usage with cache tokens, cache points, throttling → retry and
 * fallback, and credentials from the AWS environment chain.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeBedrock, startFakeOpenAI, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import { useProcessEnv } from '../../../../test/helpers/process-env.js';
import { runConversation } from '../loop/run-conversation.js';
import type { Tool } from '../tools/registry.js';
import { createProvider } from './resolve.js';
import { SESSION_HEADING } from './system-prompt.js';
import type { CompletionRequest, Provider } from './types.js';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const ACCESS_KEY = 'AKIAFAKEBEDROCK00001';
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, random: () => 0 };
const AWS_ENV = { AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: 'fake-secret', AWS_REGION: 'eu-west-1' } as const;

let fake: FakeLLM;
let provider: Provider;
// The standard AWS credential chain reads the environment: that is the configuration under test.
useProcessEnv(AWS_ENV);
beforeEach(async () => {
  fake = await startFakeBedrock({ accessKeyId: ACCESS_KEY });
  provider = createProvider({ provider: 'bedrock', model: MODEL, baseUrl: fake.url });
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

describe('Bedrock Converse provider', () => {
  it('streams text from the binary event stream, signed with the environment credentials and region', async () => {
    fake.script({ text: 'Hello from Bedrock!', usage: { input: 50, output: 5, cacheRead: 30, cacheWrite: 12 } });
    const deltas: string[] = [];
    const result = await provider.complete(request({ onTextDelta: (t) => deltas.push(t) }));

    expect(deltas.join('')).toBe('Hello from Bedrock!');
    expect(deltas.length).toBeGreaterThan(1);
    expect(result).toMatchObject({ finishReason: 'stop', message: { content: 'Hello from Bedrock!' }, model: MODEL });
    expect(result.usage).toEqual({ input: 50, output: 5, cacheRead: 30, cacheWrite: 12 });

    const sent = fake.requests[0]!;
    expect(sent.path).toBe(`/model/${MODEL}/converse-stream`);
    expect(sent.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY}/\\d{8}/eu-west-1/bedrock/aws4_request`));
    expect(sent.body.messages).toEqual([{ role: 'user', content: [{ text: 'hello' }, { cachePoint: { type: 'default' } }] }]);
  });

  it('places cache points on the static prefix, the end of the system prompt and the last two messages', async () => {
    fake.script({ text: 'ok' });
    await provider.complete(
      request({
        systemPrompt: `Static part.${SESSION_HEADING}Platform: telegram.`,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ],
      }),
    );
    const body = fake.requests[0]!.body as { system: object[]; messages: { content: object[] }[] };
    expect(body.system).toEqual([
      { text: 'Static part.' },
      { cachePoint: { type: 'default' } },
      { text: `${SESSION_HEADING}Platform: telegram.` },
      { cachePoint: { type: 'default' } },
    ]);
    expect(body.messages.map((m) => m.content.some((b) => 'cachePoint' in b))).toEqual([false, true, true]);
  });

  it('runs a tool round trip (toolUse → toolResult) through the loop', async () => {
    fake.script({ toolCalls: [{ id: 'tooluse_1', name: 'lookup', arguments: '{"q":"herald"}' }] }, { text: 'A herald brings news.' });
    const result = await runConversation({ userMessage: 'What is a herald?', history: [], systemPrompt: 'S', provider, tools: [lookup], retry: FAST_RETRY });

    expect(result.finalResponse).toBe('A herald brings news.');
    expect(result.newMessages[1]!.tool_calls?.[0]).toMatchObject({ id: 'tooluse_1', function: { name: 'lookup', arguments: '{"q":"herald"}' } });
    const second = fake.requests[1]!.body as { messages: { role: string; content: Record<string, unknown>[] }[]; toolConfig: unknown };
    expect(second.messages[1]!.content[0]).toEqual({ toolUse: { toolUseId: 'tooluse_1', name: 'lookup', input: { q: 'herald' } } });
    expect(second.messages[2]!.content[0]).toEqual({ toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'definition of herald' }] } });
    expect(second.toolConfig).toMatchObject({ tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }] });
  });

  it('maps ThrottlingException to rate_limit, a too-long input to context_overflow, AccessDenied to auth', async () => {
    fake.script({ error: { status: 429 } }, { error: { status: 400, kind: 'context_length' } }, { error: { status: 403 } });
    await expect(provider.complete(request())).rejects.toMatchObject({ kind: 'rate_limit', status: 429 });
    await expect(provider.complete(request())).rejects.toMatchObject({ kind: 'context_overflow' });
    await expect(provider.complete(request())).rejects.toMatchObject({ kind: 'auth' });
  });

  it('a throttled Bedrock falls back to the next provider in the chain', async () => {
    const openai = await startFakeOpenAI();
    try {
      fake.script({ error: { status: 429 } });
      openai.script({ text: 'from the fallback' });
      const fallback = createProvider({ provider: 'openai', model: 'gpt-4.1-mini', apiKey: 'k', baseUrl: openai.url });
      const result = await runConversation({ userMessage: 'hi', history: [], systemPrompt: 'S', provider, fallbacks: [fallback], retry: FAST_RETRY });
      expect(result.finalResponse).toBe('from the fallback');
      expect(fake.requests).toHaveLength(1);
    } finally {
      await openai.close();
    }
  });

  it('retries a 503 on the same provider when it is the last one', async () => {
    fake.script({ error: { status: 503, kind: 'overloaded' } }, { text: 'back' });
    const result = await runConversation({ userMessage: 'hi', history: [], systemPrompt: 'S', provider, retry: FAST_RETRY });
    expect(result.finalResponse).toBe('back');
    expect(fake.requests).toHaveLength(2);
  });

  it('a request signed with unknown credentials is refused as auth', async () => {
    process.env.AWS_ACCESS_KEY_ID = 'AKIASOMEONEELSE00000';
    try {
      const other = createProvider({ provider: 'bedrock', model: MODEL, baseUrl: fake.url });
      await expect(other.complete(request())).rejects.toMatchObject({ kind: 'auth', status: 403 });
    } finally {
      process.env.AWS_ACCESS_KEY_ID = ACCESS_KEY;
    }
  });
});

describe('Bedrock: reasoning effort as Claude thinking fields (C5)', () => {
  it('sends the thinking budget in additionalModelRequestFields and the signed reasoning back in the tool loop', async () => {
    const thinker = createProvider({ provider: 'bedrock', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0', baseUrl: fake.url, reasoningEffort: 'medium' });
    fake.script({ reasoning: 'Look the word up first.', toolCalls: [{ id: 'tu_1', name: 'lookup', arguments: '{"q":"herald"}' }] }, { text: 'A messenger.' });
    const result = await runConversation({
      userMessage: 'what is a herald?',
      history: [],
      systemPrompt: 's',
      provider: thinker,
      tools: [lookup],
      retry: FAST_RETRY,
    });

    expect(result.error).toBeUndefined();
    expect(result.finalResponse).toBe('A messenger.');
    const [first, second] = fake.requests;
    expect(first!.body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 8_000 } });
    expect((first!.body.inferenceConfig as { maxTokens: number }).maxTokens).toBeGreaterThan(8_000);
    const assistant = (second!.body.messages as { content: Record<string, unknown>[] }[])[1]!;
    expect(assistant.content[0]).toMatchObject({ reasoningContent: { reasoningText: { text: 'Look the word up first.' } } });
  });

  it('a model other than Claude gets no thinking fields', async () => {
    const nova = createProvider({ provider: 'bedrock', model: 'amazon.nova-lite-v1:0', baseUrl: fake.url, reasoningEffort: 'high', thinkingBudget: 4096 });
    await nova.complete(request());
    expect(fake.requests[0]!.body.additionalModelRequestFields).toBeUndefined();
  });
});
