import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { isCompleted, toShareGpt } from './sharegpt.js';

const SESSION = { id: 's1', systemPrompt: 'You are Herald.', startedAt: Date.UTC(2025, 2, 4), model: 'openai:gpt-4.1-mini', source: 'telegram' };

const TURN: ChatMessage[] = [
  { role: 'user', content: 'weather in Oslo and Bergen?' },
  {
    role: 'assistant',
    content: null,
    reasoning: 'two cities',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      { id: 'c2', type: 'function', function: { name: 'weather', arguments: 'not json' } },
    ],
    finish_reason: 'tool_calls',
  },
  { role: 'tool', content: '{"temp":3}', tool_call_id: 'c1' },
  { role: 'tool', content: 'Bergen: 7°C', tool_call_id: 'c2' },
  { role: 'assistant', content: 'Oslo 3°C, Bergen 7°C.', finish_reason: 'stop' },
];

describe('ShareGPT trajectories', () => {
  it('writes system, human, gpt (think + tool_call blocks) and one tool turn for consecutive results', () => {
    const record = toShareGpt(SESSION, TURN);
    expect(record).toMatchObject({ id: 's1', timestamp: '2025-03-04T00:00:00.000Z', model: 'openai:gpt-4.1-mini', source: 'telegram', completed: true });
    expect(record.conversations).toEqual([
      { from: 'system', value: 'You are Herald.' },
      { from: 'human', value: 'weather in Oslo and Bergen?' },
      {
        from: 'gpt',
        value:
          '<think>\ntwo cities\n</think>\n<tool_call>\n{"name":"weather","arguments":{"city":"Oslo"}}\n</tool_call>\n' +
          '<tool_call>\n{"name":"weather","arguments":"not json"}\n</tool_call>',
      },
      {
        from: 'tool',
        value:
          '<tool_response>\n{"tool_call_id":"c1","name":"weather","content":{"temp":3}}\n</tool_response>\n' +
          '<tool_response>\n{"tool_call_id":"c2","name":"weather","content":"Bergen: 7°C"}\n</tool_response>',
      },
      { from: 'gpt', value: '<think>\n</think>\nOslo 3°C, Bergen 7°C.' },
    ]);
  });

  it('a conversation that stops on a tool call, a length cut or a user message is not completed', () => {
    expect(isCompleted(TURN.slice(0, 4))).toBe(false);
    expect(isCompleted([...TURN.slice(0, 1), { role: 'assistant', content: 'cut', finish_reason: 'length' }])).toBe(false);
    expect(isCompleted(TURN.slice(0, 1))).toBe(false);
    expect(isCompleted(TURN)).toBe(true);
  });
});
