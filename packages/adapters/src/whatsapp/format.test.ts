import { describe, expect, it } from 'vitest';
import { markdownToWhatsApp } from './format.js';

describe('markdownToWhatsApp', () => {
  it("turns the model's Markdown into WhatsApp's marks", () => {
    expect(markdownToWhatsApp('**bold**, *italic*, ~~gone~~ and `code`')).toBe('*bold*, _italic_, ~gone~ and `code`');
    expect(markdownToWhatsApp('# Title\n\ntext')).toBe('*Title*\n\ntext');
    expect(markdownToWhatsApp('***both***')).toBe('*_both_*');
  });

  it('keeps fenced code monospaced, without the language tag', () => {
    expect(markdownToWhatsApp('```ts\nconst a = 1;\n```')).toBe('```\nconst a = 1;\n```');
  });

  it('draws lists with bullets and keeps numbers', () => {
    expect(markdownToWhatsApp('- one\n- two\n  - inner')).toBe('• one\n• two\n  • inner');
    expect(markdownToWhatsApp('1. first\n2. second')).toBe('1. first\n2. second');
  });

  it('writes links as label and URL, and quotes with >', () => {
    expect(markdownToWhatsApp('[docs](https://example.com/d)')).toBe('docs (https://example.com/d)');
    expect(markdownToWhatsApp('see <https://example.com>')).toBe('see https://example.com');
    expect(markdownToWhatsApp('> quoted\n> twice')).toBe('> quoted\n> twice');
  });

  it('leaves plain text and emphasis inside a word as written', () => {
    expect(markdownToWhatsApp('2*3*4 = 24')).toBe('2*3*4 = 24');
    expect(markdownToWhatsApp('just words')).toBe('just words');
  });
});
