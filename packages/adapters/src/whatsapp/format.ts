/**
 * Markdown (what the model writes) → WhatsApp's formatting, rendered from the parsed tree:
 * **bold** → *bold*, *italic* → _italic_, ~~strike~~ → ~strike~, `code` → `code`, fenced blocks → ```mono```,
 * (fences on lines of their own), headings → bold lines, lists → • and numbers, quotes → `> `, links → `label (url)` (WhatsApp links bare URLs).
 * WhatsApp has no escapes: text is shown as written, and emphasis inside a word (`2*3*4`) keeps its source.
 */
import { isPlainText, parseMarkdown } from '../shared/markdown/parse.js';
import { renderMarkdown, type PlatformMarkup } from '../shared/markdown/render.js';
import { fencedBlock, lineQuote, starInline } from '../shared/markdown/star-inline.js';

export function markdownToWhatsApp(markdown: string): string {
  if (isPlainText(markdown)) return markdown;
  return renderMarkdown(parseMarkdown(markdown), WHATSAPP_MARKUP);
}

const asWritten = (text: string): string => text;

const WHATSAPP_MARKUP: PlatformMarkup = {
  inline: starInline({
    bold: '*',
    italic: '_',
    strike: '~',
    text: (_written, value) => value,
    asWritten,
    other: asWritten,
    code: asWritten,
    link: (url, label) => linked(url, label),
  }),
  heading: (inner) => `*${inner}*`,
  codeBlock: (node) => fencedBlock(node.value),
  quote: lineQuote,
  monospace: fencedBlock,
  literal: asWritten,
};

function linked(url: string, label: string): string {
  const text = label.trim();
  const bare = url.replace(/^mailto:/, '');
  if (text === '' || text === url || text === bare) return bare;
  return url === '' ? text : `${text} (${bare})`;
}
