/**
 * Markdown (what the model writes) → WhatsApp's formatting, rendered from the parsed tree:
 * **bold** → *bold*, *italic* → _italic_, ~~strike~~ → ~strike~, `code` → `code`, fenced blocks → ```mono```,
 * (fences on lines of their own), headings → bold lines, lists → • and numbers, quotes → `> `, links → `label (url)` (WhatsApp links bare URLs).
 * WhatsApp has no escapes: text is shown as written, and emphasis inside a word (`2*3*4`) keeps its source.
 */
import type { PhrasingContent } from 'mdast';
import { isPlainText, parseMarkdown, sourceOf, span } from '../shared/markdown/parse.js';
import { renderMarkdown, type PlatformMarkup, type Rendering } from '../shared/markdown/render.js';
import { plainText } from '../shared/markdown/table.js';

const WORD_CHAR_RE = /[\p{L}\p{N}]/u;

export function markdownToWhatsApp(markdown: string): string {
  if (isPlainText(markdown)) return markdown;
  return renderMarkdown(parseMarkdown(markdown), WHATSAPP_MARKUP);
}

const WHATSAPP_MARKUP: PlatformMarkup = {
  inline: inlineText,
  heading: (inner) => `*${inner}*`,
  codeBlock: (node) => mono(node.value),
  quote: (inner, inList) =>
    inList
      ? inner
      : inner
          .split('\n')
          .map((line) => `> ${line}`)
          .join('\n'),
  monospace: mono,
  literal: (text) => text,
};

/** On lines of their own, so the shared chunker closes and reopens a block it has to split. */
function mono(code: string): string {
  return code === '' ? '```\n```' : `\`\`\`\n${code}\n\`\`\``;
}

function inlineText(nodes: readonly PhrasingContent[], r: Rendering, bold: boolean): string {
  return nodes.map((node) => inlineNode(node, r, bold)).join('');
}

function inlineNode(node: PhrasingContent, r: Rendering, bold: boolean): string {
  const inner = (): string => ('children' in node ? inlineText(node.children, r, bold) : '');
  if ((node.type === 'emphasis' || node.type === 'strong' || node.type === 'delete') && insideWord(r, node)) return sourceOf(r.md, node);
  switch (node.type) {
    case 'text':
      return node.value;
    case 'strong':
      return bold ? inner() : `*${inlineText(node.children, r, true)}*`;
    case 'emphasis': {
      const [only] = node.children;
      if (!bold && node.children.length === 1 && only.type === 'strong') return `*_${inlineText(only.children, r, true)}_*`;
      return `_${inner()}_`;
    }
    case 'delete':
      return `~${inner()}~`;
    case 'inlineCode':
      return `\`${node.value}\``;
    case 'break':
      return '\n';
    case 'link':
      return linked(node.url, plainText(node.children));
    case 'linkReference':
      return linked(r.definitions.get(node.identifier)?.url ?? '', plainText(node.children));
    case 'image':
      return linked(node.url, node.alt ?? '');
    case 'imageReference':
      return linked(r.definitions.get(node.identifier)?.url ?? '', node.alt ?? '');
    default:
      return sourceOf(r.md, node);
  }
}

function insideWord(r: Rendering, node: PhrasingContent): boolean {
  const [start, end] = span(node);
  return WORD_CHAR_RE.test(r.md.source.charAt(start - 1)) || WORD_CHAR_RE.test(r.md.source.charAt(end));
}

function linked(url: string, label: string): string {
  const text = label.trim();
  const bare = url.replace(/^mailto:/, '');
  if (text === '' || text === url || text === bare) return bare;
  return url === '' ? text : `${text} (${bare})`;
}
