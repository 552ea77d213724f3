import { describe, expect, it } from 'vitest';
import { REASONING_VIEW_MAX_CHARS, hasReasoning, withReasoning } from './reasoning-view.js';

describe('withReasoning', () => {
  it("quotes the turn's thinking above the answer, and leaves an answer without thinking alone", () => {
    const turn = [
      { role: 'user' as const, content: 'hi' },
      { role: 'assistant' as const, content: null, reasoning: 'Look it up first.', tool_calls: [] },
      { role: 'assistant' as const, content: 'Sunny.', reasoning: 'It says sunny.\nSay so.' },
    ];
    expect(withReasoning('Sunny.', turn)).toBe('💭 Reasoning:\n> Look it up first.\n> \n> It says sunny.\n> Say so.\n\nSunny.');
    expect(withReasoning('Sunny.', [{ role: 'assistant', content: 'Sunny.' }])).toBe('Sunny.');
  });

  it('cuts a long thinking to a readable length', () => {
    const text = withReasoning('ok', [{ role: 'assistant', content: 'ok', reasoning: 'x'.repeat(REASONING_VIEW_MAX_CHARS * 2) }]);
    expect(text.length).toBeLessThan(REASONING_VIEW_MAX_CHARS + 40);
    expect(text).toMatch(/…\n\nok$/);
  });
});

describe('hasReasoning', () => {
  it('is true only when an assistant message of the turn carries non-blank reasoning (the switch is read only then)', () => {
    expect(hasReasoning([{ role: 'assistant', content: 'Sunny.' }])).toBe(false);
    expect(hasReasoning([{ role: 'assistant', content: 'Sunny.', reasoning: '  \n' }])).toBe(false);
    expect(hasReasoning([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Sunny.', reasoning: 'Say so.' }])).toBe(true);
  });
});
