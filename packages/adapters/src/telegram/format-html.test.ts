import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTelegramHtml, type Entity } from '../../../../test/fakes/telegram/html.js';
import { codeBody, documents, markdownSoup, toMarkdown, type Block, type Inline } from '../shared/markdown/test-support.js';
import { markdownToTelegramHtml } from './format.js';

const ENTITY: Record<Inline['kind'], string | null> = {
  plain: null,
  bold: 'bold',
  italic: 'italic',
  strike: 'strikethrough',
  code: 'code',
  link: 'text_link',
};

/** What a Telegram client shows for a generated document: its text and its entities. */
function shown(doc: readonly Block[]): { text: string; entities: Entity[] } {
  let text = '';
  const entities: Entity[] = [];
  const run = (inlines: readonly Inline[], inHeading: boolean): void => {
    inlines.forEach((i, n) => {
      if (n > 0) text += ' ';
      const type = ENTITY[i.kind];
      if (type && !(inHeading && type === 'bold')) {
        entities.push({ type, offset: text.length, length: i.text.length, ...(i.url && { url: i.url }) });
      }
      text += i.text;
    });
  };
  const around = (type: string, extra: Partial<Entity>, body: () => void): void => {
    const offset = text.length;
    body();
    entities.push({ type, offset, length: text.length - offset, ...extra });
  };
  doc.forEach((b, n) => {
    if (n > 0) text += '\n\n';
    if (b.kind === 'paragraph') run(b.inlines, false);
    if (b.kind === 'quote') around('blockquote', {}, () => run(b.inlines, false));
    if (b.kind === 'heading') around('bold', {}, () => run(b.inlines, true));
    if (b.kind === 'code') around('pre', b.lang ? { language: b.lang } : {}, () => (text += b.code));
    if (b.kind === 'bullets') {
      b.items.forEach((item, k) => {
        text += `${k > 0 ? '\n' : ''}• `;
        run(item, false);
      });
    }
  });
  return { text, entities: sorted(entities) };
}

const sorted = (es: Entity[]): Entity[] => [...es].sort((a, b) => a.offset - b.offset || b.length - a.length || a.type.localeCompare(b.type));

const letters = (s: string): string => s.replace(/[^\p{L}\p{N}]/gu, '');

/** Nesting Telegram refuses: anything around a pre block, a quote in a quote, a link in a link. */
function refusedNesting(entities: readonly Entity[]): string | null {
  for (const outer of entities) {
    for (const inner of entities) {
      if (inner === outer || inner.offset < outer.offset || inner.offset + inner.length > outer.offset + outer.length) continue;
      const pair = `${inner.type} in ${outer.type}`;
      if (inner.type === 'pre' || ['blockquote in blockquote', 'text_link in text_link'].includes(pair)) return pair;
    }
  }
  return null;
}

function isSubsequence(part: string, whole: string): boolean {
  let i = 0;
  for (const ch of whole) if (ch === part[i]) i++;
  return i === part.length;
}

describe('Telegram HTML from the Markdown tree', () => {
  it('shows a document with the text and entities it means: bold, italic, links, quotes, headings, lists, code', () => {
    fc.assert(
      fc.property(documents, (doc) => {
        const parsed = parseTelegramHtml(markdownToTelegramHtml(toMarkdown(doc)));
        if (!parsed.ok) throw new Error(parsed.error);
        expect({ text: parsed.text, entities: sorted(parsed.entities) }).toEqual(shown(doc));
      }),
    );
  });

  it('renders any Markdown to HTML Telegram accepts, inventing no text', () => {
    fc.assert(
      fc.property(markdownSoup, (md) => {
        const parsed = parseTelegramHtml(markdownToTelegramHtml(md));
        if (!parsed.ok) throw new Error(`${parsed.error} for ${JSON.stringify(md)}`);
        expect(isSubsequence(letters(parsed.text), letters(md))).toBe(true);
        expect(refusedNesting(parsed.entities)).toBeNull();
      }),
    );
  });

  it('keeps a code block byte for byte, wherever it sits', () => {
    fc.assert(
      fc.property(markdownSoup, codeBody, (before, code) => {
        const parsed = parseTelegramHtml(markdownToTelegramHtml(`${before.replace(/[`~]/g, '')}\n\n\`\`\`sh\n${code}\n\`\`\`\n\nafter`));
        if (!parsed.ok) throw new Error(parsed.error);
        const blocks = parsed.entities.filter((e) => e.type === 'pre').map((e) => parsed.text.slice(e.offset, e.offset + e.length));
        expect(blocks).toContain(code);
      }),
    );
  });

  it('lays a table out as an aligned preformatted block', () => {
    const html = markdownToTelegramHtml('| Name | Qty |\n|---|--:|\n| **apple** | 3 |\n| `kiwi` <x> | 12 |');
    expect(html).toBe('<pre>Name     | Qty\n---------+----\napple    | 3\nkiwi &lt;x&gt; | 12</pre>');
  });

  it('numbers ordered lists as written and indents nested lists', () => {
    expect(markdownToTelegramHtml('3. three\n4. four\n   - nested _it_\n\n- back')).toBe('3. three\n4. four\n  • nested <i>it</i>\n\n• back');
  });

  it('nests emphasis, keeps a heading one bold span, and shows links to schemes Telegram refuses as written', () => {
    expect(markdownToTelegramHtml('## A **b** _c_\n*x **y** ~~z~~*')).toBe('<b>A b <i>c</i></b>\n<i>x <b>y</b> <s>z</s></i>');
    expect(markdownToTelegramHtml('[a](ftp://x) [b][ref]\n\n[ref]: https://r.example')).toBe('[a](ftp://x) <a href="https://r.example">b</a>');
  });

  it('shows a line over --- as text and a drawn rule, as models mean it', () => {
    expect(markdownToTelegramHtml('Some **text**\n---\nmore')).toBe('Some <b>text</b>\n──────────\nmore');
  });

  it('pairs spoilers across emphasis, but not inside code or across a space', () => {
    expect(markdownToTelegramHtml('||a _b_|| `||c||` || d ||')).toBe('<tg-spoiler>a <i>b</i></tg-spoiler> <code>||c||</code> || d ||');
  });

  it('closes a quote around a code block (Telegram nests no block in a quote)', () => {
    expect(markdownToTelegramHtml('> before\n> ```\n> x\n> ```\n> after')).toBe(
      '<blockquote>before</blockquote>\n<pre>x</pre>\n<blockquote>after</blockquote>',
    );
  });

  it('shows an image inside a link as its alt text, never a link in a link', () => {
    expect(markdownToTelegramHtml('[![logo](https://i.example/l.png)](https://x.example)')).toBe('<a href="https://x.example">logo</a>');
  });
});
