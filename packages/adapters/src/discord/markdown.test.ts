import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codeBody, documents, markdownSoup, toMarkdown } from '../shared/markdown/test-support.js';
import { formatForDiscord } from './format.js';

const letters = (s: string): string => s.replace(/[^\p{L}\p{N}]/gu, '');

describe('Discord Markdown from the Markdown tree', () => {
  it('sends what Discord draws itself exactly as written; only headings deeper than ### become bold', () => {
    fc.assert(
      fc.property(documents, (doc) => {
        const shallow = doc.map((b) => (b.kind === 'heading' ? { ...b, level: Math.min(b.level, 3) } : b));
        expect(formatForDiscord(toMarkdown(shallow))).toBe(toMarkdown(shallow));
        const deep = doc.map((b) => (b.kind === 'heading' ? { ...b, level: 4 } : b));
        const bolded = toMarkdown(deep).replace(/^#### (.*)$/gm, '**$1**');
        expect(formatForDiscord(toMarkdown(deep))).toBe(bolded);
      }),
    );
  });

  it('keeps every letter and digit of any Markdown outside tables, in order', () => {
    fc.assert(
      fc.property(
        markdownSoup.filter((md) => !md.includes('|')),
        (md) => {
          expect(letters(formatForDiscord(md))).toBe(letters(md));
        },
      ),
    );
  });

  it('keeps a code block byte for byte, wherever it sits', () => {
    fc.assert(
      fc.property(markdownSoup, codeBody, (before, code) => {
        const block = `\`\`\`sh\n${code}\n\`\`\``;
        expect(formatForDiscord(`${before.replace(/[`~]/g, '')}\n\n${block}\n\n#### after`)).toContain(`${block}\n\n**after**`);
      }),
    );
  });

  it('draws a table in a quote or a list inside it, every line prefixed', () => {
    expect(formatForDiscord('> | a | b |\n> |---|---|\n> | 1 | 2 |\n\n- | x |\n  |---|\n  | `y` |')).toBe(
      ['> ```', '> a | b', '> --+--', '> 1 | 2', '> ```', '', '- ```', '  x', '  -', '  y', '  ```'].join('\n'),
    );
  });

  it('converts images inside a deep heading and keeps a setext title on its line', () => {
    expect(formatForDiscord('##### See ![map](https://m.example/a.png)\nTitle\n===\n\n> Quoted\n> ---')).toBe(
      '**See [map](https://m.example/a.png)**\nTitle\n──────────\n\n> Quoted\n> ──────────',
    );
  });
});
