import { describe, expect, it } from 'vitest';
import { decodeEntities, htmlTitle, htmlToText } from './html-to-text.js';

describe('htmlToText', () => {
  it('keeps the words a reader sees, in lines, without scripts, styles or tags', () => {
    const html = `<!doctype html><html><head><title>Caf&eacute; &amp; Bar</title><style>body{color:red}</style>
      <script>var secret = "do not show";</script></head>
      <body><!-- hidden comment --><h1>Menu</h1><p>Coffee &ndash; 2&nbsp;&euro;<br>Tea&#x2014;1&#8364;</p>
      <ul><li>Cake</li><li>Pie</li></ul><noscript>enable JS</noscript>
      <p>Fish   &amp;
      chips &lt;3 &unknown;</p></body></html>`;
    expect(htmlToText(html)).toBe('Menu\n\nCoffee – 2 €\nTea—1€\n\n- Cake\n- Pie\n\nFish & chips <3 &unknown;');
    expect(htmlTitle(html)).toBe('Café & Bar');
  });

  it('decodes numeric references safely', () => {
    expect(decodeEntities('&#65;&#x42;&#0;&#xD800;&#x110000;')).toBe('AB\uFFFD\uFFFD\uFFFD');
  });
});
