import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainText, parseMarkdown } from './parse.js';
import { renderMarkdown, type PlatformMarkup } from './render.js';

/** Shows text nodes as their text and anything else (any Markdown the parser found) as `¤`. */
const TEXT_ONLY: PlatformMarkup = {
  inline: (nodes) => nodes.map((n) => (n.type === 'text' ? n.value : '¤')).join(''),
  heading: () => '¤',
  codeBlock: () => '¤',
  quote: () => '¤',
  monospace: () => '¤',
  literal: (text) => text,
};

const character = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...'abcxyz019 .,;:!?()\'"%$&/é😀\t'.split(/(?:)/u)) },
  { weight: 1, arbitrary: fc.constantFrom(...'\\`*_~|[]<>#+=-\n\r\0'.split('')) },
  { weight: 2, arbitrary: fc.constant('\n') },
);

describe('isPlainText', () => {
  it('holds only for text the parser reads as nothing but text, so skipping the parser changes nothing', () => {
    fc.assert(
      fc.property(fc.array(character, { maxLength: 60 }), (chars) => {
        const text = chars.join('');
        fc.pre(isPlainText(text));
        expect(renderMarkdown(parseMarkdown(text), TEXT_ONLY)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('sends anything with Markdown syntax through the parser', () => {
    for (const md of ['**b**', 'a_b', '# h', '> q', '- i', '1. i', '2) i', 'a\n---', 'x  \ny', ' lead', '[l](u)', '<@U1>', 'a|b']) {
      expect(isPlainText(md), md).toBe(false);
    }
    expect(isPlainText('ok: hello, 3 + 4 = 7 & e-mail me (today)!\n\nBye.')).toBe(true);
  });
});
