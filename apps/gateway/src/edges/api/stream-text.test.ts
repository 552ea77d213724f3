import { describe, expect, it } from 'vitest';
import { StreamedText } from './stream-text.js';

function run(steps: Array<['delta', string] | ['restart'] | ['tool'] | ['final', string]>): { sent: string[]; text: string } {
  const s = new StreamedText();
  const sent: string[] = [];
  for (const step of steps) {
    const out = step[0] === 'delta' ? s.delta(step[1]) : step[0] === 'final' ? s.final(step[1]) : (step[0] === 'restart' ? s.restart() : s.toolStarted(), '');
    if (out) sent.push(out);
  }
  return { sent, text: s.text };
}

describe('StreamedText', () => {
  it('passes deltas through and sends nothing more when the reply is what was streamed', () => {
    expect(
      run([
        ['delta', 'Hello '],
        ['delta', 'world'],
        ['final', 'Hello world'],
      ]),
    ).toEqual({ sent: ['Hello ', 'world'], text: 'Hello world' });
  });

  it('after a retry, text identical to what was shown is not sent again; what continues it is', () => {
    const r = run([['delta', 'Hel'], ['restart'], ['delta', 'He'], ['delta', 'llo'], ['delta', ' there'], ['final', 'Hello there']]);
    expect(r.sent).toEqual(['Hel', 'lo', ' there']);
    expect(r.text).toBe('Hello there');
  });

  it('a replacement that differs starts after a blank line', () => {
    const r = run([['delta', 'Bonjour'], ['restart'], ['delta', 'Hi'], ['final', 'Hi']]);
    expect(r.text).toBe('Bonjour\n\nHi');
  });

  it('each model response of a turn with tools is set off by a blank line; the final reply is not repeated', () => {
    const r = run([['delta', 'Let me look.'], ['tool'], ['tool'], ['delta', 'Found '], ['delta', 'it.'], ['final', 'Found it.']]);
    expect(r.text).toBe('Let me look.\n\nFound it.');
  });

  it('a reply nobody streamed (an error text, a recorded reply) is sent whole', () => {
    expect(run([['final', '⚠️ Something went wrong.']]).text).toBe('⚠️ Something went wrong.');
    expect(run([['delta', 'partial'], ['tool'], ['final', 'Done.']]).text).toBe('partial\n\nDone.');
  });
});
