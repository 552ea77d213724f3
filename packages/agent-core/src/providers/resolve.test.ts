import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import { createProvider, parseModelRef, resolveApiMode } from './resolve.js';

describe('parseModelRef', () => {
  it('splits provider:model at the first colon only', () => {
    expect(parseModelRef('openai:gpt-4.1-mini')).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(parseModelRef(' anthropic:claude-sonnet-4-5 ')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(parseModelRef('openai:llama3.1:8b')).toEqual({ provider: 'openai', model: 'llama3.1:8b' });
    // Named endpoints and Bedrock ids (whose version follows a colon).
    expect(parseModelRef('openrouter:anthropic/claude-sonnet-4.5')).toEqual({ provider: 'openrouter', model: 'anthropic/claude-sonnet-4.5' });
    expect(parseModelRef('bedrock:anthropic.claude-3-haiku-20240307-v1:0')).toEqual({ provider: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0' });
  });

  it.each(['gpt-4.1-mini', 'open ai:gpt-4o', '9x:model', 'openai:', ':gpt-4o', ''])('rejects %j with a message naming the value', (bad) => {
    expect(() => parseModelRef(bad)).toThrow(`"${bad}"`);
    expect(() => parseModelRef(bad)).toThrow(/provider:model/);
  });
});

describe('resolveApiMode', () => {
  it('prefers the explicit mode, then the provider, then the base URL', () => {
    expect(resolveApiMode({ provider: 'anthropic', apiMode: 'chat_completions' })).toBe('chat_completions');
    expect(resolveApiMode({ provider: 'anthropic' })).toBe('anthropic_messages');
    expect(resolveApiMode({ provider: 'openai' })).toBe('chat_completions');
    expect(resolveApiMode({ provider: 'openai', baseUrl: 'https://api.minimax.io/anthropic' })).toBe('anthropic_messages');
    expect(resolveApiMode({ provider: 'openai', baseUrl: 'http://localhost:11434/v1' })).toBe('chat_completions');
    expect(resolveApiMode({ provider: 'openai-responses' })).toBe('responses');
    expect(resolveApiMode({ provider: 'openai', apiMode: 'responses' })).toBe('responses');
    expect(resolveApiMode({ provider: 'bedrock' })).toBe('bedrock_converse');
    expect(resolveApiMode({ provider: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1' })).toBe('chat_completions');
  });

  it('takes a bedrock-runtime base URL for Bedrock, whatever the endpoint is called (A7)', () => {
    expect(resolveApiMode({ provider: 'aws', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com' })).toBe('bedrock_converse');
    // A VPC interface endpoint keeps the service name in its host.
    expect(resolveApiMode({ provider: 'corp', baseUrl: 'https://vpce-0a1b.bedrock-runtime.eu-west-1.vpce.amazonaws.com' })).toBe('bedrock_converse');
    // Claude through Bedrock: the URL names both; the Converse API is what the endpoint speaks.
    const claude = createProvider({
      provider: 'claude-aws',
      model: 'anthropic.claude-3-haiku-20240307-v1:0',
      baseUrl: 'https://bedrock-runtime.us-west-2.amazonaws.com/anthropic',
      region: 'us-west-2',
    });
    expect(claude.apiMode).toBe('bedrock_converse');
    expect(resolveApiMode({ provider: 'aws', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', apiMode: 'chat_completions' })).toBe(
      'chat_completions',
    );
  });
});

describe('createProvider', () => {
  const fakes: FakeLLM[] = [];
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });

  it('talks Messages to an Anthropic base URL and Chat Completions otherwise', async () => {
    const anthropic = await startFakeAnthropic();
    const openai = await startFakeOpenAI();
    fakes.push(anthropic, openai);
    const req = { systemPrompt: 's', messages: [{ role: 'user' as const, content: 'ping' }], tools: [], signal: new AbortController().signal };

    const a = createProvider({ ...parseModelRef('anthropic:claude-haiku-4-5'), apiKey: 'k', baseUrl: anthropic.url });
    expect(a.apiMode).toBe('anthropic_messages');
    expect((await a.complete(req)).message.content).toBe('ok: ping');
    expect(anthropic.requests[0]!.path).toBe('/v1/messages');

    const o = createProvider({ ...parseModelRef('openai:llama3.1:8b'), apiKey: '', baseUrl: openai.url });
    expect(o.apiMode).toBe('chat_completions');
    // A keyless local server still works: the SDK gets a placeholder key.
    expect((await o.complete(req)).message.content).toBe('ok: ping');
    expect(openai.requests[0]!.body.model).toBe('llama3.1:8b');
  });
});
