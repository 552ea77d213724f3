/** J4: a reply cut by the output limit whose context is near the window is compressed, then continued. */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../compression/summarize.js';
import { CONTINUE_PROMPT, runConversation } from './run-conversation.js';
import { ScriptedProvider, type RecordedCall } from './scripted-provider.js';
import type { AgentEvent } from './types.js';

const isSummary = (c: RecordedCall) => c.systemPrompt === SUMMARIZER_SYSTEM_PROMPT;
const history = (n: number): ChatMessage[] =>
  Array.from({ length: n }, (_, i): ChatMessage => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `old ${i} ${'z'.repeat(400)}` }));

function provider(firstPromptTokens: number): ScriptedProvider {
  const agentSteps = [
    { text: 'The first half, ', finish: 'length' as const, usage: { input: firstPromptTokens, output: 1_000 } },
    { text: 'and the second half.', usage: { input: 1_000, output: 200 } },
  ];
  return new ScriptedProvider('m-length').otherwise((call) => (isSummary(call) ? { text: 'SUMMARY-OK' } : agentSteps.shift()!));
}

async function turn(p: ScriptedProvider) {
  const events: AgentEvent[] = [];
  const result = await runConversation({
    userMessage: 'write it all',
    history: history(60),
    systemPrompt: 'S',
    provider: p,
    compression: { contextWindow: 20_000 },
    onEvent: (e) => events.push(e),
  });
  return { result, events };
}

describe('a reply cut by the output limit near the context window', () => {
  it('compresses the history before asking for the rest, and the reply still reads as one', async () => {
    const p = provider(12_000);
    const { result, events } = await turn(p);

    expect(p.calls.map(isSummary)).toEqual([false, true, false]);
    const continuation = p.calls[2];
    expect(continuation.messages.length).toBeLessThan(p.calls[0].messages.length);
    expect(continuation.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'The first half, ' },
      { role: 'user', content: CONTINUE_PROMPT },
    ]);
    expect(JSON.stringify(continuation.messages)).toContain('SUMMARY-OK');
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'status', kind: 'compression', message: expect.stringMatching(/^reply cut off near the context window: compressed/) }),
    );
    expect(result).toMatchObject({ finalResponse: 'The first half, and the second half.', completed: true });
    // The compacted history ends with the whole reply, never with the scaffold.
    expect(result.compactedHistory?.at(-1)).toEqual({ role: 'assistant', content: 'The first half, and the second half.', finish_reason: 'stop' });
    expect(JSON.stringify(result.compactedHistory)).not.toContain(CONTINUE_PROMPT);
  });

  it('far from the window, only continues, as before', async () => {
    const p = provider(2_000);
    const { result } = await turn(p);
    expect(p.calls.some(isSummary)).toBe(false);
    expect(result.compactedHistory).toBeUndefined();
    expect(result.finalResponse).toBe('The first half, and the second half.');
  });
});
