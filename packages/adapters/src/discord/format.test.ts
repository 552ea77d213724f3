import { describe, expect, it } from 'vitest';
import { formatForDiscord } from './format.js';

describe('formatForDiscord', () => {
  it('leaves what Discord renders natively alone', () => {
    const md = '# Title\n## Sub\n### Third\n**bold** *it* ~~gone~~ `code` > quote\n- item\n1. one\n[link](https://x.example)';
    expect(formatForDiscord(md)).toBe(md);
  });

  it('turns a pipe table into an aligned code block', () => {
    const md = 'Prices:\n| Fruit | **Price** |\n|:------|------:|\n| apple | 1 |\n| watermelon | 12 |\nafter';
    expect(formatForDiscord(md)).toBe(
      ['Prices:', '```', 'Fruit      | Price', '-----------+------', 'apple      | 1', 'watermelon | 12', '```', 'after'].join('\n'),
    );
  });

  it('does not mistake a pipe followed by a setext underline for a table', () => {
    const md = 'a | b\n---';
    expect(formatForDiscord(md)).toBe('a | b\n──────────');
  });

  it('turns headings deeper than ### into bold lines', () => {
    expect(formatForDiscord('#### Details\n###### Tiny ##')).toBe('**Details**\n**Tiny**');
  });

  it('draws thematic breaks instead of printing the dashes', () => {
    expect(formatForDiscord('above\n\n---\n\nbelow\n* * *')).toBe('above\n\n──────────\n\nbelow\n──────────');
  });

  it('turns images into links, but not inside inline code', () => {
    expect(formatForDiscord('See ![chart](https://x.example/c.png) and `![raw](keep)` and ![](https://x.example/y.png)')).toBe(
      'See [chart](https://x.example/c.png) and `![raw](keep)` and https://x.example/y.png',
    );
  });

  it('never touches fenced code', () => {
    const md = '```md\n#### not a heading\n| a | b |\n|---|---|\n---\n![x](y)\n```\n#### heading';
    expect(formatForDiscord(md)).toBe('```md\n#### not a heading\n| a | b |\n|---|---|\n---\n![x](y)\n```\n**heading**');
  });
});
