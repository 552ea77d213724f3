import { describe, expect, it } from 'vitest';
import { parseTelegramHtml } from '../../../../test/fakes/telegram/html.js';
import { formatChunks, markdownToTelegramHtml, telegramVisibleLength } from './format.js';

describe('markdownToTelegramHtml', () => {
  it.each([
    ['**bold** and __bold__', '<b>bold</b> and <b>bold</b>'],
    ['*italic* and _italic_', '<i>italic</i> and <i>italic</i>'],
    ['~~gone~~ and ||spoiler||', '<s>gone</s> and <tg-spoiler>spoiler</tg-spoiler>'],
    ['a `x < y && z` b', 'a <code>x &lt; y &amp;&amp; z</code> b'],
    ['see [the docs](https://example.com/a?b=1&c=2)', 'see <a href="https://example.com/a?b=1&amp;c=2">the docs</a>'],
    ['# Heading', '<b>Heading</b>'],
    ['- one\n* two', '• one\n• two'],
    ['> quoted\n> text', '<blockquote>quoted\ntext</blockquote>'],
    ['```python\nif a < b:\n    pass\n```', '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>'],
    ['```\nplain & simple\n```', '<pre>plain &amp; simple</pre>'],
  ])('renders %j', (md, html) => {
    expect(markdownToTelegramHtml(md)).toBe(html);
  });

  it.each(['snake_case_identifier stays as is', '2 * 3 * 4 = 24', 'an unclosed **bold', 'a lone ` backtick', '[not a link](javascript:alert(1))', 'x <y> & z'])(
    'keeps %j literal (escaped)',
    (md) => {
      const parsed = parseTelegramHtml(markdownToTelegramHtml(md));
      expect(parsed).toMatchObject({ ok: true, text: md, entities: [] });
    },
  );

  it('produces HTML Telegram accepts for awkward Markdown', () => {
    const awkward = [
      '***both*** and **bold with `code`** and *a **nested** one*',
      '**[bold link](https://x.y)** then <https://auto.link/path>',
      '```js\nconst s = "</pre>";\n```\n**after**',
      '~~**mixed**~~ ||_spoiled_||',
      '> **quoted bold**\n> - list in quote',
      '\\*escaped\\* \\_chars\\_',
    ];
    for (const md of awkward) expect(parseTelegramHtml(markdownToTelegramHtml(md)).ok, md).toBe(true);
  });
});

describe('formatChunks', () => {
  it('keeps short text in one chunk and pairs HTML with its Markdown', () => {
    expect(formatChunks('**hi**', 4096)).toEqual([{ html: '<b>hi</b>', plain: '**hi**' }]);
  });

  it('renders each chunk on its own, so no tag spans two messages', () => {
    const text = Array.from({ length: 200 }, (_, i) => `**item ${i}** is _fine_`).join('\n');
    const chunks = formatChunks(text, 1000);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      const parsed = parseTelegramHtml(c.html);
      expect(parsed.ok).toBe(true);
      expect(telegramVisibleLength(c.html)).toBeLessThanOrEqual(1000);
    }
  });

  it('puts the chunk counter after a code block on its own line', () => {
    const code = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const [first] = formatChunks(`\`\`\`\n${code}\n\`\`\``, 400);
    expect(first.html).toMatch(/<\/pre>\n\(1\/\d+\)$/);
  });
});
