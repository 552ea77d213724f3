import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codeBody, documents, markdownSoup, toMarkdown, type Block, type Inline } from '../shared/markdown/test-support.js';
import { escapeMrkdwn, markdownToMrkdwn } from './format.js';

/** Slack's link and mention syntax and its quote marker: the only places a bare `<`, `>` or `&` may appear. */
const SLACK_SYNTAX_RE = /<[^<>\s|][^<>|]*(?:\|[^<>\n]*)?>|^> /gm;

const MRKDWN: Record<Inline['kind'], (text: string, bold: boolean) => string> = {
  plain: (t) => t,
  bold: (t, bold) => (bold ? t : `*${t}*`),
  italic: (t) => `_${t}_`,
  strike: (t) => `~${t}~`,
  code: (t) => `\`${t}\``,
  link: (t) => t,
};

/** The mrkdwn a generated document means. */
function mrkdwn(doc: readonly Block[]): string {
  const run = (inlines: readonly Inline[], bold = false): string =>
    inlines
      .map((i) => (i.kind === 'link' ? `<${i.url!.replace(/&/g, '&amp;')}|${escapeMrkdwn(i.text)}>` : MRKDWN[i.kind](escapeMrkdwn(i.text), bold)))
      .join(' ');
  return doc
    .map((b) => {
      switch (b.kind) {
        case 'paragraph':
          return run(b.inlines);
        case 'quote':
          return `> ${run(b.inlines)}`;
        case 'heading':
          return `*${run(b.inlines, true)}*`;
        case 'bullets':
          return b.items.map((item) => `• ${run(item)}`).join('\n');
        case 'code':
          return `\`\`\`\n${escapeMrkdwn(b.code)}\n\`\`\``;
      }
    })
    .join('\n\n');
}

describe('Slack mrkdwn from the Markdown tree', () => {
  it('writes a document as the mrkdwn it means: bold, italic, links, quotes, headings, lists, code', () => {
    fc.assert(
      fc.property(documents, (doc) => {
        expect(markdownToMrkdwn(toMarkdown(doc))).toBe(mrkdwn(doc));
      }),
    );
  });

  it('never leaves a bare < > or & outside link syntax, whatever the Markdown', () => {
    fc.assert(
      fc.property(markdownSoup, (md) => {
        const outside = markdownToMrkdwn(md).replace(SLACK_SYNTAX_RE, '');
        expect(outside).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
      }),
    );
  });

  it('keeps a code block byte for byte (escaped), wherever it sits', () => {
    fc.assert(
      fc.property(markdownSoup, codeBody, (before, code) => {
        const out = markdownToMrkdwn(`${before.replace(/[`~]/g, '')}\n\n\`\`\`sh\n${code}\n\`\`\`\n\nafter`);
        expect(out).toContain(`\`\`\`\n${escapeMrkdwn(code)}\n\`\`\``);
      }),
    );
  });

  it('lays a table out as an aligned code block', () => {
    expect(markdownToMrkdwn('| Name | Qty |\n|---|--:|\n| **apple** | 3 |\n| kiwi & co | 12 |\nafter *it*')).toBe(
      '```\nName      | Qty\n----------+----\napple     | 3\nkiwi &amp; co | 12\n```\nafter _it_',
    );
  });

  it('numbers ordered lists as written, indents nested lists, and flattens nested quotes to Slack’s one level', () => {
    expect(markdownToMrkdwn('1. one\n2. two\n   * nested __b__\n\n> a\n> > b')).toBe('1. one\n2. two\n  • nested *b*\n\n> a\n> b');
  });

  it('shows emphasis inside a word as written (Slack draws none there) and a line over --- as text and a rule', () => {
    expect(markdownToMrkdwn('2*3*4 and un**real**ly\nSome text\n---')).toBe('2*3*4 and un**real**ly\nSome text\n──────────');
    expect(markdownToMrkdwn('\\*not bold\\* but **bold**')).toBe('\\*not bold\\* but *bold*');
  });

  it('nests emphasis and resolves reference links', () => {
    expect(markdownToMrkdwn('*a **b** ~~c~~* **_d_**\n\n[e][r]\n\n[r]: https://r.example/?x=1&y=2')).toBe(
      '_a *b* ~c~_ *_d_*\n\n<https://r.example/?x=1&amp;y=2|e>',
    );
  });
});
