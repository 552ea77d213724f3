/**
 * Telegram's outgoing text: the Markdown chunked (fence-aware, numbered) and each chunk rendered to HTML on its
 * own, so a tag never spans two messages. The plain Markdown rides along for when Telegram rejects the HTML.
 */
import { chunkMessage } from '../shared/chunk.js';
import { escapeHtml, markdownToTelegramHtml } from './markdown-html.js';

export { markdownToTelegramHtml } from './markdown-html.js';

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
