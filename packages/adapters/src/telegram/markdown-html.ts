/**
 * Markdown (what the agent writes) → Telegram HTML (parse_mode "HTML"), rendered from the parsed tree.
 *
 * HTML is the forgiving choice: only `<`, `>` and `&` need escaping, unlike MarkdownV2's eighteen reserved
 * characters. Tags come from tree nodes, so they always pair up; Markdown the parser does not see as markup (a lone
 * `*`, an unclosed `**`, a link to a scheme Telegram refuses) stays literal text.
 */
import type { Nodes, PhrasingContent } from 'mdast';
import { parseMarkdown, sourceOf } from '../shared/markdown/parse.js';
import { renderMarkdown, type PlatformMarkup, type Rendering } from '../shared/markdown/render.js';
import { markSpoilers } from './spoilers.js';

const LINK_SCHEME_RE = /^(https?:\/\/|tg:\/\/|mailto:)/i;

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeHtml(s).replace(/"/g, '&quot;');
}

export function markdownToTelegramHtml(markdown: string): string {
  const md = parseMarkdown(markdown);
  markSpoilers(md);
  return renderMarkdown(md, TELEGRAM_HTML);
}

const TELEGRAM_HTML: PlatformMarkup = {
  inline: inlineHtml,
  heading: (inner) => `<b>${inner}</b>`,
  codeBlock: (node) => {
    const code = escapeHtml(node.value);
    return node.lang ? `<pre><code class="language-${escapeAttr(node.lang)}">${code}</code></pre>` : `<pre>${code}</pre>`;
  },
  quote: (inner) => `<blockquote>${inner}</blockquote>`,
  monospace: (text) => `<pre>${escapeHtml(text)}</pre>`,
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
      return bold ? inner() : `<b>${inlineHtml(node.children, r, true)}</b>`;
    case 'emphasis':
      return `<i>${inner()}</i>`;
    case 'delete':
      return `<s>${inner()}</s>`;
    case 'spoiler':
      return `<tg-spoiler>${inner()}</tg-spoiler>`;
    case 'inlineCode':
      return `<code>${escapeHtml(node.value)}</code>`;
    case 'break':
      return '\n';
    case 'link':
      return anchor(node.url, inner(), node, r);
    case 'linkReference':
      return anchor(r.definitions.get(node.identifier)?.url ?? '', inner(), node, r);
    case 'image':
      return anchor(node.url, escapeHtml(node.alt ?? ''), node, r);
    case 'imageReference':
      return anchor(r.definitions.get(node.identifier)?.url ?? '', escapeHtml(node.alt ?? ''), node, r);
    default:
      return escapeHtml(sourceOf(r.md, node));
  }
}

/** A link Telegram will open; anything else (javascript:, relative paths) is shown as written. */
function anchor(url: string, inner: string, node: Nodes, r: Rendering): string {
  if (!LINK_SCHEME_RE.test(url)) return escapeHtml(sourceOf(r.md, node));
  return `<a href="${escapeAttr(url)}">${inner === '' ? escapeHtml(url) : inner}</a>`;
}
