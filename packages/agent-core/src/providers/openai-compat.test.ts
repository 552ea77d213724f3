/**
 * The OpenAI-compatible family beyond OpenAI itself, through the real provider against the stand-in: servers that
 * send tool calls without ids (C6), OpenRouter's `reasoning_details` and Gemini's `thought_signature` (C4).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type FakeOpenAIOptions } from '../../../../test/fakes/llm/index.js';
import type { ChatMessage } from '../base/types.js';
import { createOpenAIProvider } from './openai.js';
import type { CompletionRequest, Provider } from './types.js';

const fakes: FakeLLM[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

async function setUp(model: string, opts: FakeOpenAIOptions = {}): Promise<{ fake: FakeLLM; provider: Provider }> {
  const fake = await startFakeOpenAI(opts);
  fakes.push(fake);
  return { fake, provider: createOpenAIProvider({ provider: 'compat', model, apiKey: 'k', baseUrl: fake.url }) };
}

function request(messages: ChatMessage[]): CompletionRequest {
  const tools = [{ name: 'lookup', description: 'look up', parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
  return { systemPrompt: 'sys', messages, tools, signal: new AbortController().signal };
}

describe('tool calls without an id (C6)', () => {
  it('get an id derived from the call: the same reply twice has the same ids, another call another id', async () => {
    const { fake, provider } = await setUp('llama3.1:8b');
    const reply = { toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}', omitId: true }, { name: 'lookup', arguments: '{"q":"b"}', omitId: true }] };
    fake.script(reply, reply);
    const first = await provider.complete(request([{ role: 'user', content: 'go' }]));
    const second = await provider.complete(request([{ role: 'user', content: 'go' }]));

    const ids = first.message.tool_calls!.map((c) => c.id);
    expect(ids[0]).toMatch(/^call_[0-9a-f]{24}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(second.message.tool_calls!.map((c) => c.id)).toEqual(ids);
    // The server really sent none.
    expect(JSON.stringify(first.message)).not.toContain('"call_fake');
  });
});
