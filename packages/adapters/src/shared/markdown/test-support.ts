/**
 * Generators for the formatting tests: small documents whose meaning is known (so a renderer's output can be
 * checked against it) and Markdown soup (fragments in any order, for properties that must hold for any input).
 */
import fc from 'fast-check';

export type InlineKind = 'plain' | 'bold' | 'italic' | 'strike' | 'code' | 'link';
export interface Inline {
  kind: InlineKind;
  text: string;
  url?: string;
}
export type Block =
  | { kind: 'paragraph' | 'quote'; inlines: Inline[] }
  | { kind: 'heading'; level: number; inlines: Inline[] }
  | { kind: 'bullets'; items: Inline[][] }
  | { kind: 'code'; lang: string; code: string };

/** Words with the characters every platform must escape, and text beyond the BMP. */
const word = fc.oneof(fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.constantFrom('a<b', 'x&y', 'c>d', 'déjà', '😀'));
const words = fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(' '));
const url = fc.constantFrom('https://example.com/a?b=1&c=2', 'https://x.example/path_with_underscores', 'mailto:me@x.example');

const inline: fc.Arbitrary<Inline> = fc.oneof(
  fc.record({ kind: fc.constantFrom<InlineKind>('plain', 'bold', 'italic', 'strike', 'code'), text: words }),
  fc.record({ kind: fc.constant<InlineKind>('link'), text: words, url }),
);
const inlines = fc.array(inline, { minLength: 1, maxLength: 4 });

/** A code line: anything but a line that would close the fence (NUL aside, which CommonMark replaces). */
const codeLine = fc.string({ unit: 'grapheme', maxLength: 24 }).filter((l) => !/[\r\n\0]/.test(l) && !/^\s*(`{3,}|~{3,})\s*$/.test(l));
export const codeBody = fc
  .array(codeLine, { minLength: 1, maxLength: 4 })
  .map((lines) => lines.join('\n'))
  .filter((code) => code.trim() !== '');

const block: fc.Arbitrary<Block> = fc.oneof(
  fc.record({ kind: fc.constantFrom('paragraph' as const, 'quote' as const), inlines }),
  fc.record({ kind: fc.constant('heading' as const), level: fc.integer({ min: 1, max: 6 }), inlines }),
  fc.record({ kind: fc.constant('bullets' as const), items: fc.array(inlines, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('code' as const), lang: fc.constantFrom('', 'js', 'python', 'c++'), code: codeBody }),
);

export const documents = fc.array(block, { minLength: 1, maxLength: 5 });

const MARKS: Record<InlineKind, (text: string) => string> = {
  plain: (t) => t,
  bold: (t) => `**${t}**`,
  italic: (t) => `_${t}_`,
  strike: (t) => `~~${t}~~`,
  code: (t) => `\`${t}\``,
  link: (t) => t,
};

function inlineMarkdown(line: readonly Inline[]): string {
  return line.map((i) => (i.kind === 'link' ? `[${i.text}](${i.url})` : MARKS[i.kind](i.text))).join(' ');
}

export function toMarkdown(doc: readonly Block[]): string {
  return doc
    .map((b) => {
      switch (b.kind) {
        case 'paragraph':
          return inlineMarkdown(b.inlines);
        case 'quote':
          return `> ${inlineMarkdown(b.inlines)}`;
        case 'heading':
          return `${'#'.repeat(b.level)} ${inlineMarkdown(b.inlines)}`;
        case 'bullets':
          return b.items.map((item) => `- ${inlineMarkdown(item)}`).join('\n');
        default: // 'code', the last kind: TypeScript narrows b to it
          return `\`\`\`${b.lang}\n${b.code}\n\`\`\``;
      }
    })
    .join('\n\n');
}

/** Markdown soup: the fragments that make parsers (and regular expressions) stumble, in any order. */
export const markdownSoup = fc
  .array(
    fc.constantFrom(
      'alpha',
      'beta',
      '42',
      ' ',
      ' ',
      '\n',
      '\n\n',
      '*',
      '**',
      '_',
      '__',
      '~',
      '~~',
      '||',
      '`',
      '```',
      '```js\n',
      '#',
      '#### ',
      '> ',
      '- ',
      '1. ',
      '|',
      '| a | b |\n|---|---|\n',
      '---',
      '===',
      '\\',
      '<',
      '>',
      '&',
      '&amp;',
      '[',
      ']',
      '(',
      ')',
      '![',
      'https://x.example/a?b=1&c=2',
      '<https://x.example>',
      '<@U1>',
      'javascript:x',
      '\t',
      '    ',
      ':',
      '!',
      'é',
      '😀',
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));
