import { describe, expect, it } from 'vitest';
import { fencesBalanced } from '../shared/chunk.js';
import { markdownToMrkdwn } from './format.js';

describe('markdownToMrkdwn', () => {
  it.each([
    ['bold', '**done** now', '*done* now'],
    ['bold with underscores', '__done__', '*done*'],
    ['italic with stars', 'an *important* word', 'an _important_ word'],
    ['italic with underscores stays', 'an _important_ word', 'an _important_ word'],
    ['bold italic', '***both***', '*_both_*'],
    ['strike', '~~old~~ new', '~old~ new'],
    ['link', '[the docs](https://example.com/x)', '<https://example.com/x|the docs>'],
    ['link with & in the URL', '[q](https://e.com/?a=1&b=2)', '<https://e.com/?a=1&amp;b=2|q>'],
    ['heading', '## Results **now**', '*Results now*'],
    ['bullets', '- one\n* two', '• one\n• two'],
    ['quote', '> said **this**', '> said *this*'],
    ['arithmetic is not italic', '2 * 3 * 4', '2 * 3 * 4'],
  ])('converts %s', (_name, input, expected) => {
    expect(markdownToMrkdwn(input)).toBe(expected);
  });

  it('escapes & < > but keeps Slack mentions, channel links and <url|label> tokens', () => {
    expect(markdownToMrkdwn('if a < b && c > d, ping <@U123> in <#C42|general> via <https://x.io|x>')).toBe(
      'if a &lt; b &amp;&amp; c &gt; d, ping <@U123> in <#C42|general> via <https://x.io|x>',
    );
  });

  it('keeps code blocks and code spans verbatim apart from escaping, and drops the language tag', () => {
    const md = 'Run:\n```python\nif a < b: print("**not bold**")\n```\nand `x **y**`';
    expect(markdownToMrkdwn(md)).toBe('Run:\n```\nif a &lt; b: print("**not bold**")\n```\nand `x **y**`');
  });

  it('closes a fence the model left open, so Slack does not swallow the rest', () => {
    const out = markdownToMrkdwn('code:\n```js\nlet x = 1;');
    expect(out).toBe('code:\n```\nlet x = 1;\n```');
    expect(fencesBalanced(out)).toBe(true);
  });
});
