import { describe, expect, it } from 'vitest';
import { ThinkTagSplitter, splitThinkTags } from './think-tags.js';

/** Feeds the chunks one by one, as a stream would, and joins what comes out. */
function stream(chunks: string[]): { text: string; reasoning: string; shownEarly: string[] } {
  const s = new ThinkTagSplitter();
  let text = '';
  let reasoning = '';
  const shownEarly: string[] = [];
  for (const c of chunks) {
    const p = s.push(c);
    text += p.text;
    reasoning += p.reasoning;
    if (p.text) shownEarly.push(p.text);
  }
  const end = s.flush();
  return { text: text + end.text, reasoning: reasoning + end.reasoning, shownEarly };
}

describe('ThinkTagSplitter', () => {
  it('moves <think>…</think> out of the text, whatever the tag name and case', () => {
    expect(stream(['<think>plan it</think>\nThe answer.'])).toMatchObject({ text: 'The answer.', reasoning: 'plan it' });
    expect(stream(['<THINKING>a</THINKING>b'])).toMatchObject({ text: 'b', reasoning: 'a' });
    expect(stream(['x <reasoning>r</reasoning> y'])).toMatchObject({ text: 'x y', reasoning: 'r' });
    expect(stream(['<REASONING_SCRATCHPAD>s</REASONING_SCRATCHPAD>done'])).toMatchObject({ text: 'done', reasoning: 's' });
  });

  it('handles tags split across chunks, and never shows a piece of a tag to the user', () => {
    const r = stream(['<th', 'ink>step ', 'one</th', 'ink>', 'Hel', 'lo <', 'b>']);
    expect(r).toMatchObject({ text: 'Hello <b>', reasoning: 'step one' });
    expect(r.shownEarly.join('')).not.toContain('<th');
  });

  it('an unclosed <think> at the end is reasoning; a lone "<" in text is text', () => {
    expect(stream(['<think>cut off mid-thought'])).toMatchObject({ text: '', reasoning: 'cut off mid-thought' });
    expect(stream(['a < b', ' and c'])).toMatchObject({ text: 'a < b and c', reasoning: '' });
  });
});

describe('splitThinkTags', () => {
  it('treats everything before a lone </think> as thinking (the template opened it in the prompt)', () => {
    expect(splitThinkTags('weighing options</think>\n\nGo with B.')).toEqual({ text: 'Go with B.', reasoning: 'weighing options' });
    expect(splitThinkTags('no tags here')).toEqual({ text: 'no tags here', reasoning: '' });
  });
});
