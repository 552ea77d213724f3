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
