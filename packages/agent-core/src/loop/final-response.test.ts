/** The final answer holds up: dropped connections, empty replies, replies that are only thinking. */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../providers/types.js';
import type { Tool } from '../tools/registry.js';
import { CONTINUE_PROMPT, EMPTY_REPLY_PROMPT, THINKING_ONLY_PROMPT, runConversation } from './run-conversation.js';
import { ScriptedProvider } from './scripted-provider.js';
import type { AgentEvent, ConversationOptions } from './types.js';

const lookup: Tool = {
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  readOnly: true,
  execute: async (args) => `answer for ${String(args.q)}`,
};
const dropped = () => new ProviderError('server_error', 'connection failed: socket hang up', { transport: true });

function turn(provider: ScriptedProvider, extra: Partial<ConversationOptions> = {}) {
  const events: AgentEvent[] = [];
  const result = runConversation({
    userMessage: 'hello',
    history: [],
    systemPrompt: 'S',
    provider,
    tools: [lookup],
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { result, events };
}

describe('a connection that drops mid-answer', () => {
  it('keeps the text already streamed and asks the model to continue from there, not to start again', async () => {
    const provider = new ScriptedProvider().script({ text: 'The first half, ', dropAfterText: dropped() }, { text: 'and the second half.' });
    const { result, events } = turn(provider);
    const r = await result;
    expect(r).toMatchObject({ finalResponse: 'The first half, and the second half.', completed: true });
    expect(provider.calls[1].messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'The first half, ' },
      { role: 'user', content: CONTINUE_PROMPT },
    ]);
    // No retry notice (which tells the display to throw the streamed text away).
    expect(events.some((e) => e.type === 'status' && e.kind === 'retry')).toBe(false);
    expect(r.newMessages.at(-1)).toEqual({ role: 'assistant', content: 'The first half, and the second half.', finish_reason: 'stop' });
  });

  it('when the continuation fails too, the user still gets the text so far, with the error', async () => {
    const provider = new ScriptedProvider()
      .script({ text: 'Partial answer.', dropAfterText: dropped() })
      .otherwise(() => ({ error: new ProviderError('auth', 'key revoked', { status: 401 }) }));
    const r = await turn(provider).result;
    expect(r).toMatchObject({ finalResponse: 'Partial answer.', completed: false, error: { kind: 'auth' } });
  });

  it('a drop before any text is retried as before', async () => {
    const provider = new ScriptedProvider().script({ error: dropped() }, { text: 'Hi' });
    const r = await turn(provider).result;
    expect(r).toMatchObject({ finalResponse: 'Hi', apiCalls: 2 });
    expect(provider.calls[1].messages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});

describe('an empty reply', () => {
  it('after tool results, the model is nudged once and its answer is used (the nudge is never stored)', async () => {
    const provider = new ScriptedProvider().script({ toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] }, {}, { text: 'Found a.' });
    const r = await turn(provider).result;
    expect(provider.calls[2].messages.at(-1)).toEqual({ role: 'user', content: EMPTY_REPLY_PROMPT });
    expect(r).toMatchObject({ finalResponse: 'Found a.', completed: true });
    expect(r.newMessages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('that is only thinking is asked for the answer', async () => {
    const provider = new ScriptedProvider().script({ reasoning: 'Let me think.' }, { text: 'Answer.' });
    const r = await turn(provider).result;
    // Merged into the user's message (two user messages in a row are not allowed), for this call only.
    expect(provider.calls[1].messages).toEqual([{ role: 'user', content: `hello\n\n${THINKING_ONLY_PROMPT}` }]);
    expect(r.finalResponse).toBe('Answer.');
  });

  it('that stays empty falls back to what the model said before its tools ran, never to nothing', async () => {
    const provider = new ScriptedProvider()
      .script({ text: 'Checking the weather for you.', toolCalls: [{ name: 'lookup', arguments: '{"q":"w"}' }] })
      .otherwise(() => ({}));
    const r = await turn(provider).result;
    expect(r.apiCalls).toBe(4);
    expect(r.finalResponse).toBe('Checking the weather for you.');
  });
});

describe('an empty reply with fallback models configured (I18)', () => {
  it('goes to the next model at once with the same request, not to the same model again', async () => {
    const primary = new ScriptedProvider('primary-model')
      .script({ toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] }, {})
      .otherwise(() => ({ text: 'primary again' }));
    const backup = new ScriptedProvider('backup-model').script({ text: 'Found a.' });
    const { result, events } = turn(primary, { fallbacks: [backup] });
    const r = await result;

    expect(primary.calls).toHaveLength(2);
    expect(backup.calls).toHaveLength(1);
    // The request the empty reply answered, unchanged: no nudge in it.
    expect(backup.calls[0].messages).toEqual(primary.calls[1].messages);
    expect(r).toMatchObject({ finalResponse: 'Found a.', completed: true, model: 'backup-model' });
    expect(events).toContainEqual({ type: 'status', kind: 'fallback', message: 'openai:primary-model gave an empty reply; using openai:backup-model' });
  });

  it('on the last model of the chain, the nudge follows as before', async () => {
    const primary = new ScriptedProvider('primary-model').script({});
    const backup = new ScriptedProvider('backup-model').script({}, { text: 'Now an answer.' });
    const r = await turn(primary, { fallbacks: [backup] }).result;
    expect(backup.calls[1].messages.at(-1)).toEqual({ role: 'user', content: `hello\n\n${EMPTY_REPLY_PROMPT}` });
    expect(r.finalResponse).toBe('Now an answer.');
  });
});

describe('progress events', () => {
  it('a step per iteration, and the text written before tool calls as interim text', async () => {
    const provider = new ScriptedProvider().script(
      { text: 'Let me look that up.', toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] },
      { toolCalls: [{ name: 'lookup', arguments: '{"q":"b"}' }] },
      { text: 'Both found.' },
    );
    const { result, events } = turn(provider, { maxIterations: 10 });
    await result;
    expect(events.filter((e) => e.type === 'step')).toEqual([
      { type: 'step', iteration: 1, remaining: 9 },
      { type: 'step', iteration: 2, remaining: 8 },
      { type: 'step', iteration: 3, remaining: 7 },
    ]);
    expect(events.filter((e) => e.type === 'interim_text')).toEqual([{ type: 'interim_text', text: 'Let me look that up.' }]);
  });
});

describe('incremental persistence', () => {
  it('the turn so far is saved after each tool batch, always from the user message on', async () => {
    const saves: string[][] = [];
    const provider = new ScriptedProvider().script(
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"a"}' }] },
      { toolCalls: [{ id: 'c2', name: 'lookup', arguments: '{"q":"b"}' }] },
      { text: 'Done.' },
    );
    await turn(provider, { onCheckpoint: async (messages) => void saves.push(messages.map((m) => m.role)) }).result;
    expect(saves).toEqual([
      ['user', 'assistant', 'tool'],
      ['user', 'assistant', 'tool', 'assistant', 'tool'],
    ]);
  });

  it('a save that fails is reported and the turn goes on', async () => {
    const provider = new ScriptedProvider().script({ toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] }, { text: 'Done.' });
    const { result, events } = turn(provider, { onCheckpoint: async () => Promise.reject(new Error('database is down')) });
    expect((await result).finalResponse).toBe('Done.');
    expect(events.some((e) => e.type === 'status' && e.message.includes('database is down'))).toBe(true);
  });

  it('a re-run resumes after the saved tool work: no tool runs twice, and the saved messages keep their places', async () => {
    const ran: string[] = [];
    const counting: Tool = { ...lookup, execute: async (args) => (ran.push(String(args.q)), `answer for ${String(args.q)}`) };
    const saved = [
      { role: 'user' as const, content: 'hello' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"a"}' } }],
      },
      { role: 'tool' as const, content: 'answer for a', tool_call_id: 'c1', tool_name: 'lookup' },
    ];
    const provider = new ScriptedProvider().script({ text: 'Found a.' });
    const r = await turn(provider, { userMessage: 'ignored on a re-run', tools: [counting], resume: saved }).result;
    expect(ran).toEqual([]);
    expect(provider.calls[0].messages).toEqual(saved);
    expect(r.finalResponse).toBe('Found a.');
    expect(r.newMessages).toEqual([...saved, { role: 'assistant', content: 'Found a.', finish_reason: 'stop' }]);
  });
});
