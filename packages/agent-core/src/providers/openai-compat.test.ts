/**
 * The OpenAI-compatible family beyond OpenAI itself, through the real provider against the stand-in: servers that
 * send tool calls without ids (C6), OpenRouter's `reasoning_details` and Gemini's `thought_signature` (C4).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type FakeOpenAIOptions } from '../../../../test/fakes/llm/index.js';
import type { ChatMessage } from '../base/types.js';
import { runConversation } from '../loop/run-conversation.js';
import type { Tool } from '../tools/registry.js';
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
    const reply = {
      toolCalls: [
        { name: 'lookup', arguments: '{"q":"a"}', omitId: true },
        { name: 'lookup', arguments: '{"q":"b"}', omitId: true },
      ],
    };
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

const lookup: Tool = {
  name: 'lookup',
  description: 'look up',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  readOnly: true,
  execute: async (args) => `found ${String(args.q)}`,
};

describe('reasoning state the server wants back with the tool history (C4)', () => {
  it("Gemini: each tool call's thought_signature is kept and sent back, so Gemini 3 takes the tool loop", async () => {
    const { fake, provider } = await setUp('gemini-3-pro-preview', { thoughtSignatures: true });
    fake.script(
      {
        toolCalls: [
          { name: 'lookup', arguments: '{"q":"a"}' },
          { name: 'lookup', arguments: '{"q":"b"}' },
        ],
      },
      { text: 'Both found.' },
    );
    const result = await runConversation({ userMessage: 'look up a and b', history: [], systemPrompt: 's', provider, tools: [lookup] });

    expect(result.error).toBeUndefined();
    expect(result.finalResponse).toBe('Both found.');
    const sentBack = (fake.requests[1]!.body.messages as { tool_calls?: Record<string, unknown>[] }[]).find((m) => m.tool_calls)!;
    expect(sentBack.tool_calls![0]!.extra_content).toEqual({ google: { thought_signature: expect.stringMatching(/^gsig_/) } });
    // Stored with the call, for the later requests of the turn and a re-run.
    expect(result.newMessages[1]!.tool_calls![0]!.extra_content).toEqual(sentBack.tool_calls![0]!.extra_content);
  });

  it("OpenRouter: the reasoning_details (signed thinking) are kept whole and sent back on the assistant's tool-call turn", async () => {
    const { fake, provider } = await setUp('anthropic/claude-sonnet-4.5', { reasoningField: 'reasoning', reasoningDetails: true });
    fake.script({ reasoning: 'I will look it up.', toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] }, { text: 'Found.' });
    const result = await runConversation({ userMessage: 'look up a', history: [], systemPrompt: 's', provider, tools: [lookup] });

    expect(result.error).toBeUndefined();
    expect(result.finalResponse).toBe('Found.');
    const sentBack = (fake.requests[1]!.body.messages as Record<string, unknown>[]).find((m) => m.tool_calls)!;
    expect(sentBack.reasoning_details).toEqual([
      { type: 'reasoning.text', format: 'anthropic-claude-v1', index: 0, text: 'I will look it up.', signature: expect.stringMatching(/^orsig_/) },
    ]);
  });

  it('another model never gets them (they are only valid for the model that wrote them)', async () => {
    const { fake, provider } = await setUp('other-model');
    const history: ChatMessage[] = [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
        reasoning_details: [{ format: 'openrouter', model: 'anthropic/claude-sonnet-4.5', data: { type: 'reasoning.text', text: 't', signature: 's' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'r' },
    ];
    await provider.complete(request(history));
    expect(JSON.stringify(fake.requests[0]!.body.messages)).not.toContain('reasoning_details');
  });
});

describe('an OpenRouter signature the model behind it refuses (I8)', () => {
  it('the request goes once more without the reasoning_details', async () => {
    const { fake, provider } = await setUp('anthropic/claude-sonnet-4.5', { reasoningField: 'reasoning', reasoningDetails: true });
    const history: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'Hello!',
        reasoning_details: [
          { format: 'openrouter', model: 'anthropic/claude-sonnet-4.5', data: { type: 'reasoning.text', text: 't', signature: 'signed-elsewhere' } },
        ],
      },
      { role: 'user', content: 'and now?' },
    ];
    const result = await provider.complete(request(history));

    expect(result.message.content).toBe('ok: and now?');
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(fake.requests[0]!.body.messages)).toContain('signed-elsewhere');
    expect(JSON.stringify(fake.requests[1]!.body.messages)).not.toContain('reasoning_details');
  });
});
