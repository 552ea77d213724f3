import { describe, expect, it } from 'vitest';
import { markdownToMatrixHtml } from './format.js';

describe('markdownToMatrixHtml', () => {
  it.each([
    ['plain text is escaped, lines broken', 'a < b & c\nnext', 'a &lt; b &amp; c<br>next'],
    ['emphasis', '**bold**, *it* and ~~gone~~', '<strong>bold</strong>, <em>it</em> and <del>gone</del>'],
    ['inline code keeps its text, escaped', 'run `a<b>`', 'run <code>a&lt;b&gt;</code>'],
    [
      'a fenced block keeps its lines and its language',
      '```ts\nconst a = 1;\nif (a < 2) {}\n```',
      '<pre><code class="language-ts">const a = 1;\nif (a &lt; 2) {}</code></pre>',
    ],
    ['web links become anchors', '[docs](https://example.org/a?b=1&c=2)', '<a href="https://example.org/a?b=1&amp;c=2">docs</a>'],
    ['other schemes stay text', '[click](javascript:alert(1))', 'click'],
    ['headings are bold lines', '# Title\ntext', '<strong>Title</strong><br>text'],
    ['lists keep their markers', '- one\n- two', '• one<br>• two'],
    ['quotes', '> said', '<blockquote>said</blockquote>'],
    ['raw HTML from the model is shown, never rendered', '<img src=x onerror=alert(1)> **b**', '&lt;img src=x onerror=alert(1)&gt; <strong>b</strong>'],
  ])('%s', (_name, md, html) => {
    expect(markdownToMatrixHtml(md)).toBe(html);
  });
});
