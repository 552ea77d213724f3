/**
 * Telegram's outgoing text: the Markdown chunked (fence-aware, numbered) and each chunk rendered to HTML on its
 * own, so a tag never spans two messages. The plain Markdown rides along for when Telegram rejects the HTML.
 *
 * Markdown (what the agent writes) → Telegram HTML (parse_mode "HTML"), rendered from the parsed tree.
 * HTML is the forgiving choice: only `<`, `>` and `&` need escaping, unlike MarkdownV2's eighteen reserved
 * characters. Tags come from tree nodes, so they always pair up; Markdown the parser does not see as markup (a lone
 * `*`, an unclosed `**`, a link to a scheme Telegram refuses) stays literal text.
 */
import type { Nodes, PhrasingContent } from 'mdast';
import { isPlainText, parseMarkdown, sourceOf } from '../shared/markdown/parse.js';
import { renderMarkdown, type PlatformMarkup, type Rendering } from '../shared/markdown/render.js';
import { markSpoilers } from './spoilers.js';
import { chunkMessage } from '../shared/chunk.js';

/** ` (2/3)` (or `\n(2/3)` after a fence) appended by chunkMessage; kept out of the rendered Markdown. */
const CHUNK_SUFFIX_RE = /[ \n](\(\d+\/\d+\))$/;
/** Extra room taken off the chunk size when a rendered chunk still came out too long. */
const RECHUNK_MARGIN = 16;
const RECHUNK_ATTEMPTS = 4;

/** Length Telegram counts for HTML text: after tags are dropped and entities decoded (UTF-16 units). */
export function telegramVisibleLength(html: string): number {
  return html.replace(/<[^>]*>/g, '').replace(/&(?:lt|gt|amp|quot|#\d+|#x[\da-f]+);/gi, '_').length;
}

export interface OutgoingChunk {
  /** Telegram HTML to send with parse_mode HTML. */
  html: string;
  /** The Markdown chunk itself: what is sent when Telegram rejects the HTML. */
  plain: string;
}

/**
 * Chunks the Markdown (fence-aware, numbered) and renders each chunk. A rendered chunk is rarely longer than its
 * Markdown (a laid-out table can be); when one is over the limit, everything is re-chunked a little smaller so
 * numbering stays whole.
 */
export function formatChunks(markdown: string, limit: number): OutgoingChunk[] {
  // The usual short answer in plain text is one chunk, shown as written: no chunking, no rendering. (A text that
  // ends like a chunk counter still goes the long way, which sets that counter apart.)
  if (markdown.length <= limit && isPlainText(markdown) && !CHUNK_SUFFIX_RE.test(markdown)) return [{ plain: markdown, html: escapeHtml(markdown) }];
  let size = limit;
  for (let attempt = 0; attempt < RECHUNK_ATTEMPTS; attempt++) {
    const chunks = chunkMessage(markdown, size).map((plain) => ({ plain, html: renderChunk(plain) }));
    const over = Math.max(...chunks.map((c) => telegramVisibleLength(c.html) - limit));
    if (over <= 0) return chunks;
    size -= over + RECHUNK_MARGIN;
  }
  // Give up on formatting rather than on the message: plain chunks always fit.
  return chunkMessage(markdown, limit).map((plain) => ({ plain, html: escapeHtml(plain) }));
}

function renderChunk(chunk: string): string {
  const suffix = CHUNK_SUFFIX_RE.exec(chunk);
  if (!suffix) return markdownToTelegramHtml(chunk);
  const body = markdownToTelegramHtml(chunk.slice(0, suffix.index));
  // After a code block the counter reads better on its own line.
  return `${body}${body.endsWith('</pre>') ? '\n' : ' '}${suffix[1]}`;
}

const LINK_SCHEME_RE = /^(https?:\/\/|tg:\/\/|mailto:)/i;
/** Our own `<pre>…</pre>` output (its content is escaped, so the first `</pre>` is its end). */
const PRE_RE = /<pre>[\s\S]*?<\/pre>/g;

/** Where inline content sits: inside bold (bold marks dropped), inside a link (no link in a link). */
interface InlinePlace {
  bold: boolean;
  link: boolean;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeHtml(s).replace(/"/g, '&quot;');
}

export function markdownToTelegramHtml(markdown: string): string {
  if (isPlainText(markdown)) return escapeHtml(markdown);
  const md = parseMarkdown(markdown);
  markSpoilers(md);
  return renderMarkdown(md, TELEGRAM_HTML);
}

const TELEGRAM_HTML: PlatformMarkup = {
  inline: (nodes, r, bold) => inlineHtml(nodes, r, { bold, link: false }),
  heading: (inner) => `<b>${inner}</b>`,
  codeBlock: (node) => {
    const code = escapeHtml(node.value);
    return node.lang ? `<pre><code class="language-${escapeAttr(node.lang)}">${code}</code></pre>` : `<pre>${code}</pre>`;
  },
  quote: quoteAroundCode,
  monospace: (text) => `<pre>${escapeHtml(text)}</pre>`,
  literal: escapeHtml,
};

/** Telegram nests no entity in a blockquote but inline ones: a quoted code block or table ends the quote around it. */
function quoteAroundCode(inner: string): string {
  const parts: string[] = [];
  let last = 0;
  for (const m of inner.matchAll(PRE_RE)) {
    parts.push(quoted(inner.slice(last, m.index)), m[0]);
    last = m.index + m[0].length;
  }
  parts.push(quoted(inner.slice(last)));
  return parts.filter((p) => p !== '').join('');
}

function quoted(html: string): string {
  const lead = /^\n*/.exec(html)?.[0] ?? '';
  const trail = /\n*$/.exec(html.slice(lead.length))?.[0] ?? '';
  const body = html.slice(lead.length, html.length - trail.length);
  return body === '' ? html : `${lead}<blockquote>${body}</blockquote>${trail}`;
}

function inlineHtml(nodes: readonly PhrasingContent[], r: Rendering, place: InlinePlace): string {
  return nodes.map((node) => inlineNode(node, r, place)).join('');
}

function inlineNode(node: PhrasingContent, r: Rendering, place: InlinePlace): string {
  const inner = (): string => ('children' in node ? inlineHtml(node.children, r, place) : '');
  const label = (): string => ('children' in node ? inlineHtml(node.children, r, { ...place, link: true }) : '');
  switch (node.type) {
    case 'text':
      return escapeHtml(node.value);
    case 'strong':
      return place.bold ? inner() : `<b>${inlineHtml(node.children, r, { ...place, bold: true })}</b>`;
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
      return anchor(node.url, label(), node, r);
    case 'linkReference':
      return anchor(r.definitions.get(node.identifier)?.url ?? '', label(), node, r);
    case 'image':
    case 'imageReference': {
      const url = node.type === 'image' ? node.url : (r.definitions.get(node.identifier)?.url ?? '');
      return place.link ? escapeHtml(node.alt ?? '') : anchor(url, escapeHtml(node.alt ?? ''), node, r);
    }
    default:
      return escapeHtml(sourceOf(r.md, node));
  }
}

/** A link Telegram will open; anything else (javascript:, relative paths) is shown as written. */
function anchor(url: string, inner: string, node: Nodes, r: Rendering): string {
  if (!LINK_SCHEME_RE.test(url)) return escapeHtml(sourceOf(r.md, node));
  return `<a href="${escapeAttr(url)}">${inner === '' ? escapeHtml(url) : inner}</a>`;
}
