/**
 * The review's one side-task call, through the real openai SDK and the LLM stand-in: the conversation and the saved
 * notes are sent with the two proposal tools; valid proposals come back checked and capped, bad ones are dropped.
 * Also the provider streams a tool call's arguments as they arrive (the tool_call_delta event's source).
 */
import { createProvider, type ChatMessage, type Provider } from '@herald/agent-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../../../../../test/fakes/llm/index.js';
import { createLogger } from '../../support/logger.js';
import { LoggedSkillEdits, PROPOSE_NOTE_TOOL, PROPOSE_SKILL_TOOL, REVIEW_SYSTEM_PROMPT, reviewConversation, reviewDue } from './post-turn-review.js';

let llm: FakeLLM;
let provider: Provider;
beforeEach(async () => {
  llm = await startFakeOpenAI();
  provider = createProvider({ provider: 'openai', model: 'gpt-4.1-nano', apiKey: 'sk-review', baseUrl: llm.url });
});
afterEach(async () => {
  await llm.close();
});

const messages: ChatMessage[] = [
  { role: 'user', content: '<memory>\nold notes\n</memory>\n\nI am Ada, call me that' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'current_time', arguments: '{}' } }] },
  { role: 'tool', content: 'noon', tool_call_id: 'c1', tool_name: 'current_time' },
  { role: 'assistant', content: 'Hello Ada, it is noon.' },
];
const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });

describe('reviewConversation', () => {
  it('sends the turns and the saved notes with the proposal tools; returns the valid proposals', async () => {
    llm.script({
      toolCalls: [
        call(PROPOSE_NOTE_TOOL, { target: 'user', content: '  Is called   Ada ' }),
        call(PROPOSE_NOTE_TOOL, { target: 'user', content: 'Is called Ada' }),
        call(PROPOSE_NOTE_TOOL, { target: 'elsewhere', content: 'dropped: no such target' }),
        call(PROPOSE_NOTE_TOOL, { target: 'memory', content: 'x'.repeat(2_000) }),
        call(PROPOSE_SKILL_TOOL, { name: 'Greet-By-Name', content: '---\nname: greet-by-name\n---\nUse the name.', reason: 'greetings' }),
        call(PROPOSE_SKILL_TOOL, { name: '../escape', content: 'dropped: a bad name' }),
        call(PROPOSE_NOTE_TOOL, ['user', 'dropped: arguments that are a list']),
        call(PROPOSE_SKILL_TOOL, ['greet', 'dropped: arguments that are a list']),
        { name: 'memory', arguments: '{"action":"add"}' },
      ],
    });
    const proposals = await reviewConversation({ provider, messages, savedNotes: 'Likes tea', signal: AbortSignal.timeout(10_000) });
    expect(proposals.notes).toEqual([{ target: 'user', content: 'Is called Ada' }]);
    expect(proposals.skills).toEqual([{ name: 'greet-by-name', content: '---\nname: greet-by-name\n---\nUse the name.', reason: 'greetings' }]);

    const body = llm.requests[0].body as { messages: Array<{ role: string; content: string }>; tools: Array<{ function: { name: string } }> };
    expect(body.messages[0]).toEqual({ role: 'system', content: REVIEW_SYSTEM_PROMPT });
    expect(body.tools.map((t) => t.function.name)).toEqual([PROPOSE_NOTE_TOOL, PROPOSE_SKILL_TOOL]);
    const asked = body.messages[1].content;
    expect(asked).toContain('Already saved:\nLikes tea');
    expect(asked).toContain('User: I am Ada, call me that');
    expect(asked).not.toContain('old notes');
    expect(asked).toContain('[calls current_time {}]');
    expect(asked).toContain('Assistant: Hello Ada, it is noon.');
  });

  it('rejects when the call fails (the stage logs it; nothing is applied)', async () => {
    llm.script({ error: { status: 400 } });
    await expect(reviewConversation({ provider, messages, savedNotes: null, signal: AbortSignal.timeout(10_000) })).rejects.toThrow();
  });

  it("streams a tool call's arguments to onToolCallDelta as they arrive", async () => {
    llm.script({ toolCalls: [call(PROPOSE_NOTE_TOOL, { target: 'user', content: 'a note long enough for several fragments' })] });
    const seen: Array<[string, number, number]> = [];
    await provider.complete({
      systemPrompt: 's',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      signal: AbortSignal.timeout(10_000),
      onToolCallDelta: (name, index, argsChars) => seen.push([name, index, argsChars]),
    });
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.every(([name, index]) => name === PROPOSE_NOTE_TOOL && index === 0)).toBe(true);
    const sizes = seen.map(([, , chars]) => chars);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    expect(sizes.at(-1)).toBe(JSON.stringify({ target: 'user', content: 'a note long enough for several fragments' }).length);
  });
});

describe('reviewDue and the logged skill sink', () => {
  it('runs after every N-th turn only', () => {
    expect([1, 2, 3, 4, 5, 6].filter((n) => reviewDue(n, 3))).toEqual([3, 6]);
    expect(reviewDue(0, 1)).toBe(false);
  });

  it('logs a proposed skill edit and gives the user one line about it', async () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    const sink = new LoggedSkillEdits(log);
    expect(await sink.propose('default', { name: 'tea', content: 'body', reason: 'brewing' })).toEqual({ line: '📚 Skill idea "tea": brewing (not saved).' });
    expect(lines.join('')).toContain('skill edit proposed by the review');
  });
});
