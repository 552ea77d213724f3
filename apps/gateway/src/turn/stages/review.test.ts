import type { ChatMessage } from '@herald/agent-core';
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../edges/commands/registry.js';
import { lastTurns, rememberText } from './review.js';

describe('the review stage', () => {
  it('reads the messages of the last N turns, tool work included', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'x', arguments: '{}' } }] },
      { role: 'tool', content: 'r', tool_call_id: 't' },
      { role: 'assistant', content: 'a2' },
      { role: 'user', content: 'three' },
      { role: 'assistant', content: 'a3' },
    ];
    expect(lastTurns(history, 2).map((m) => m.content)).toEqual(['two', null, 'r', 'a2', 'three', 'a3']);
    expect(lastTurns(history, 5)).toEqual(history);
  });

  it("an offered note's button stands for a /remember command with its target", () => {
    const text = rememberText({ target: 'user', content: 'Prefers green tea' });
    expect(text).toBe('/remember user Prefers green tea');
    expect(parseCommand(text)).toMatchObject({ spec: { name: 'remember' }, args: 'user Prefers green tea' });
  });
});
