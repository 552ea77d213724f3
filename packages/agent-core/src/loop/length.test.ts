/** The output length limit: replies cut off inside a tool call, failed continuations, max_tokens lowered to fit. */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../providers/types.js';
import type { Tool } from '../tools/registry.js';
import { CONTINUE_PROMPT, PARTIAL_TRUNCATED_TOOL_CALL, TRUNCATED_TOOL_CALL_PROMPT, runConversation } from './run-conversation.js';
import { ScriptedProvider } from './scripted-provider.js';
import type { ConversationOptions } from './types.js';

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 2, maxRetries: 0 };
const ran: string[] = [];
const lookup: Tool = {
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  readOnly: true,
  execute: async (args) => {
    ran.push(String(args.q));
    return `answer for ${String(args.q)}`;
  },
};
const cut = { toolCalls: [{ name: 'lookup', arguments: '{"q":"wea' }], finish: 'length' as const };

function turn(provider: ScriptedProvider, extra: Partial<ConversationOptions> = {}) {
  ran.length = 0;
  return runConversation({ userMessage: 'hello', history: [], systemPrompt: 'S', provider, tools: [lookup], retry: FAST_RETRY, ...extra });
}

describe('a reply cut off inside a tool call', () => {
  it('is asked again with twice the room, up to the model cap, and the cut call never runs or is stored', async () => {
    const provider = new ScriptedProvider('gpt-5-mini').script(cut, { toolCalls: [{ name: 'lookup', arguments: '{"q":"weather"}' }] }, { text: 'Sunny.' });
    const r = await turn(provider, { maxTokens: 1000 });
    expect(provider.calls.map((c) => c.maxTokens)).toEqual([1000, 2000, 2000]);
    expect(ran).toEqual(['weather']);
    expect(r).toMatchObject({ finalResponse: 'Sunny.', completed: true });
    expect(r.newMessages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(r.newMessages[1].tool_calls?.[0].function.arguments).toBe('{"q":"weather"}');
  });

  it('with no more room to give, the model is told (never stored) and tries again', async () => {
    const provider = new ScriptedProvider('local-model').script(
      { ...cut, text: 'Let me look.' },
      { toolCalls: [{ name: 'lookup', arguments: '{"q":"w"}' }] },
      { text: 'Done.' },
    );
    const r = await turn(provider);
    expect(provider.calls[1].messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Let me look.' },
      { role: 'user', content: TRUNCATED_TOOL_CALL_PROMPT },
    ]);
    expect(ran).toEqual(['w']);
    expect(r.finalResponse).toBe('Done.');
    expect(r.newMessages.some((m) => m.content === TRUNCATED_TOOL_CALL_PROMPT || m.content === 'Let me look.')).toBe(false);
  });

  it('still cut off after that: the turn ends with the text it has and says why, not "(no answer)"', async () => {
    const provider = new ScriptedProvider('local-model').otherwise(() => ({ ...cut, text: 'I will check the weather. ' }));
    const r = await turn(provider);
    expect(r).toMatchObject({ finalResponse: 'I will check the weather. ', completed: false, partial: PARTIAL_TRUNCATED_TOOL_CALL, apiCalls: 3 });
    expect(ran).toEqual([]);
    expect(r.newMessages.at(-1)).toEqual({ role: 'assistant', content: 'I will check the weather. ', finish_reason: 'length' });
  });

  it('a length stop after complete tool calls runs them', async () => {
    const provider = new ScriptedProvider().script({ toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }], finish: 'length' }, { text: 'ok' });
    const r = await turn(provider);
    expect(ran).toEqual(['a']);
    expect(r.finalResponse).toBe('ok');
  });

  it('a reply that was only thinking when cut off is asked again once with more room', async () => {
    const provider = new ScriptedProvider('claude-sonnet-4-6').script({ reasoning: 'hmm', finish: 'length' }, { text: 'Answer.' });
    const r = await turn(provider, { maxTokens: 16_384 });
    expect(provider.calls.map((c) => c.maxTokens)).toEqual([16_384, 32_768]);
    expect(r).toMatchObject({ finalResponse: 'Answer.', completed: true });
  });
});

describe('a continuation that fails', () => {
  it('rolls the history back to the last complete message, but the user keeps the text so far', async () => {
    const provider = new ScriptedProvider().script({ text: 'Part one, ', finish: 'length' }, { error: new ProviderError('server_error', 'boom') });
    const r = await turn(provider);
    expect(provider.calls[1].messages.at(-1)).toEqual({ role: 'user', content: CONTINUE_PROMPT });
    expect(r).toMatchObject({ finalResponse: 'Part one, ', completed: false, error: { kind: 'server_error' } });
    expect(r.newMessages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});

describe('"input + max_tokens > limit"', () => {
  it('lowers max_tokens to the room the error names and asks again, without compressing', async () => {
    const overflow = new ProviderError('context_overflow', 'input length and `max_tokens` exceed context limit: 190000 + 16384 > 200000', {
      status: 400,
      contextLimit: 200_000,
      promptTokens: 190_000,
    });
    let compressions = 0;
    const provider = new ScriptedProvider('claude-sonnet-4-5').script({ error: overflow }, { text: 'fits' });
    const r = await turn(provider, { maxTokens: 16_384, onContextOverflow: async () => (compressions++, null) });
    expect(provider.calls.map((c) => c.maxTokens)).toEqual([16_384, 10_000]);
    expect(compressions).toBe(0);
    expect(r.finalResponse).toBe('fits');
  });

  it('compresses as before when too little room would be left for an answer', async () => {
    const overflow = new ProviderError('context_overflow', 'x', { status: 400, contextLimit: 200_000, promptTokens: 199_500 });
    let compressions = 0;
    const provider = new ScriptedProvider().script({ error: overflow });
    const r = await turn(provider, { maxTokens: 4096, onContextOverflow: async () => (compressions++, null) });
    expect(compressions).toBe(1);
    expect(r.error?.kind).toBe('context_overflow');
  });
});
