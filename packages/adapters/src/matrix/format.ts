/**
 * Markdown (what the model writes) → Matrix's `org.matrix.custom.html` (the HTML subset clients render), from the
 * parsed tree: **bold** → <strong>, *italic* → <em>, ~~strike~~ → <del>, `code` → <code>, fenced blocks →
 * <pre><code class="language-x">, headings → bold lines, lists → • and numbers (laid out by the shared renderer),
 * quotes → <blockquote>, links → <a href>. Everything the model wrote is escaped: no HTML of its own reaches a client.
 * The event's plain `body` is the Markdown itself, which reads fine as text.
 */
import type { PhrasingContent } from 'mdast';
import { isPlainText, parseMarkdown, sourceOf } from '../shared/markdown/parse.js';
import { renderMarkdown, type PlatformMarkup, type Rendering } from '../shared/markdown/render.js';

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Line breaks become <br> outside <pre> (inside it they are the block's own). */
function breakLines(html: string): string {
  return html
    .split(/(<pre>[\s\S]*?<\/pre>)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\n/g, '<br>')))
    .join('');
}

export function markdownToMatrixHtml(markdown: string): string {
  if (isPlainText(markdown)) return breakLines(escapeHtml(markdown));
  return breakLines(renderMarkdown(parseMarkdown(markdown), MATRIX_HTML));
}

const MATRIX_HTML: PlatformMarkup = {
  inline: inlineHtml,
  heading: (inner) => `<strong>${inner}</strong>`,
  codeBlock: (node) => {
    const lang = node.lang && /^[\w+#.-]{1,32}$/.test(node.lang) ? ` class="language-${node.lang}"` : '';
    return `<pre><code${lang}>${escapeHtml(node.value)}</code></pre>`;
  },
  // The shared renderer lays blocks out as lines; a quote's lines stay lines inside it.
  quote: (inner) => `<blockquote>${inner}</blockquote>`,
  monospace: (text) => `<pre><code>${escapeHtml(text)}</code></pre>`,
  literal: escapeHtml,
};

function inlineHtml(nodes: readonly PhrasingContent[], r: Rendering, bold: boolean): string {
  return nodes.map((node) => inlineNode(node, r, bold)).join('');
}

function inlineNode(node: PhrasingContent, r: Rendering, bold: boolean): string {
  const inner = (): string => ('children' in node ? inlineHtml(node.children, r, bold) : '');
  switch (node.type) {
    case 'text':
      return escapeHtml(node.value);
    case 'strong':
      return bold ? inner() : `<strong>${inlineHtml(node.children, r, true)}</strong>`;
    case 'emphasis':
      return `<em>${inner()}</em>`;
    case 'delete':
      return `<del>${inner()}</del>`;
    case 'inlineCode':
      return `<code>${escapeHtml(node.value)}</code>`;
    case 'break':
      return '\n';
    case 'link':
      return link(node.url, inner());
    case 'linkReference': {
      const url = r.definitions.get(node.identifier)?.url;
      return url ? link(url, inner()) : escapeHtml(sourceOf(r.md, node));
    }
    case 'image':
      return link(node.url, escapeHtml(node.alt || node.url));
    case 'imageReference': {
      const url = r.definitions.get(node.identifier)?.url;
      return url ? link(url, escapeHtml(node.alt || url)) : escapeHtml(sourceOf(r.md, node));
    }
    default:
      return escapeHtml(sourceOf(r.md, node));
  }
}

/** Only web and mail links become anchors (a `javascript:` URL stays text). */
function link(url: string, labelHtml: string): string {
  if (!/^(https?:|mailto:)/i.test(url)) return labelHtml || escapeHtml(url);
  return `<a href="${escapeHtml(url)}">${labelHtml || escapeHtml(url)}</a>`;
}
