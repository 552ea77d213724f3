/**
 * Markdown (what the agent writes) -> Telegram HTML (parse_mode "HTML").
 *
 * HTML is the forgiving choice: only `<`, `>` and `&` need escaping, unlike MarkdownV2's eighteen reserved
 * characters. Every tag is emitted in matched pairs, so output is always well-formed; Markdown that does not
 * pair up (a lone `*`, an unclosed `**`) stays literal text. Spans do not cross lines, which keeps a chunk
 * boundary from ever leaving a tag open.
 */
import { chunkMessage } from '../shared/chunk.js';

const FENCE_RE = /^\s*(```+|~~~+)\s*([\w+#.-]*)[^`]*$/;
const HEADING_RE = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const RULE_RE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET_RE = /^(\s*)[-*+]\s+(.*)$/;
const QUOTE_RE = /^\s{0,3}>\s?(.*)$/;
const ESCAPABLE_RE = /[\\`*_{}[\]()#+\-.!|~>]/;
const LINK_SCHEME_RE = /^(https?:\/\/|tg:\/\/|mailto:)/i;
const AUTOLINK_RE = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i;
/** ` (2/3)` (or `\n(2/3)` after a fence) appended by chunkMessage; kept out of the rendered Markdown. */
const CHUNK_SUFFIX_RE = /[ \n](\(\d+\/\d+\))$/;
/** Extra room taken off the chunk size when a rendered chunk still came out too long. */
const RECHUNK_MARGIN = 16;
const RECHUNK_ATTEMPTS = 4;

/** Inline delimiters, longest first so `**` wins over `*`. */
const SPANS: { delim: string; tag: string; intraword: boolean }[] = [
  { delim: '**', tag: 'b', intraword: true },
  { delim: '__', tag: 'b', intraword: false },
  { delim: '~~', tag: 's', intraword: true },
  { delim: '||', tag: 'tg-spoiler', intraword: true },
  { delim: '*', tag: 'i', intraword: true },
  { delim: '_', tag: 'i', intraword: false },
];

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeHtml(s).replace(/"/g, '&quot;');
}

export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE_RE.exec(line);
    if (fence) {
      const [, marker, lang] = fence;
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const close = /^\s*(```+|~~~+)\s*$/.exec(lines[j]);
        if (close && close[1][0] === marker[0] && close[1].length >= marker.length) break;
        body.push(lines[j]);
      }
      const code = escapeHtml(body.join('\n'));
      out.push(lang ? `<pre><code class="language-${escapeAttr(lang)}">${code}</code></pre>` : `<pre>${code}</pre>`);
      i = j; // an unclosed fence runs to the end, as in CommonMark
      continue;
    }
    if (QUOTE_RE.test(line)) {
      const quoted: string[] = [];
      for (; i < lines.length && QUOTE_RE.test(lines[i]); i++) quoted.push(renderInline(QUOTE_RE.exec(lines[i])![1]));
      i--;
      out.push(`<blockquote>${quoted.join('\n')}</blockquote>`);
      continue;
    }
    const heading = HEADING_RE.exec(line);
    if (heading) {
      out.push(`<b>${renderInline(heading[1])}</b>`);
      continue;
    }
    if (RULE_RE.test(line)) {
      out.push('──────────');
      continue;
    }
    const bullet = BULLET_RE.exec(line);
    if (bullet) {
      out.push(`${bullet[1]}• ${renderInline(bullet[2])}`);
      continue;
    }
    out.push(renderInline(line));
  }
  return out.join('\n');
}

export function renderInline(s: string): string {
  let out = '';
  let i = 0;
  outer: while (i < s.length) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length && ESCAPABLE_RE.test(s[i + 1])) {
      out += escapeHtml(s[i + 1]);
      i += 2;
      continue;
    }
    if (c === '`') {
      const code = codeSpan(s, i);
      if (code) {
        out += `<code>${escapeHtml(code.inner)}</code>`;
        i = code.end;
        continue;
      }
      const run = /^`+/.exec(s.slice(i))![0];
      out += run;
      i += run.length;
      continue;
    }
    if (c === '[') {
      const link = linkAt(s, i);
      if (link) {
        out += `<a href="${escapeAttr(link.url)}">${renderInline(link.text)}</a>`;
        i = link.end;
        continue;
      }
    }
    if (c === '<') {
      const auto = AUTOLINK_RE.exec(s.slice(i));
      if (auto) {
        out += `<a href="${escapeAttr(auto[1])}">${escapeHtml(auto[1])}</a>`;
        i += auto[0].length;
        continue;
      }
    }
    for (const span of SPANS) {
      if (!s.startsWith(span.delim, i)) continue;
      const end = closingDelimiter(s, i, span.delim, span.intraword);
      if (end === -1) continue;
      out += `<${span.tag}>${renderInline(s.slice(i + span.delim.length, end))}</${span.tag}>`;
      i = end + span.delim.length;
      continue outer;
    }
    // A delimiter that did not pair up is literal, the whole run of it (so `***` does not half-match later).
    const literalRun = /^(\*+|_+|~+|\|+)/.exec(s.slice(i));
    const literal = literalRun ? literalRun[0] : c;
    out += escapeHtml(literal);
    i += literal.length;
  }
  return out;
}

function codeSpan(s: string, start: number): { inner: string; end: number } | null {
  const run = /^`+/.exec(s.slice(start))![0];
  const close = s.indexOf(run, start + run.length);
  if (close === -1) return null;
  // A longer backtick run is not our closer.
  if (s[close + run.length] === '`') return null;
  let inner = s.slice(start + run.length, close);
  if (inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' ')) inner = inner.slice(1, -1);
  if (inner.length === 0) return null;
  return { inner, end: close + run.length };
}

function linkAt(s: string, start: number): { text: string; url: string; end: number } | null {
  let depth = 0;
  let j = start;
  for (; j < s.length; j++) {
    if (s[j] === '[') depth++;
    else if (s[j] === ']' && --depth === 0) break;
  }
  if (j >= s.length || s[j + 1] !== '(') return null;
  const text = s.slice(start + 1, j);
  let k = j + 2;
  depth = 1;
  for (; k < s.length; k++) {
    if (s[k] === '(') depth++;
    else if (s[k] === ')' && --depth === 0) break;
  }
  if (k >= s.length) return null;
  const url = s.slice(j + 2, k).trim().split(/\s+/)[0] ?? '';
  if (!LINK_SCHEME_RE.test(url) || text.length === 0) return null;
  return { text, url, end: k + 1 };
}

const isSpace = (ch: string | undefined): boolean => ch === undefined || /\s/.test(ch);
const isWordChar = (ch: string | undefined): boolean => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);

/** Index of the delimiter that closes the one at `start`, or -1. Follows CommonMark's flanking rules loosely. */
function closingDelimiter(s: string, start: number, delim: string, intraword: boolean): number {
  const open = start + delim.length;
  if (isSpace(s[open])) return -1;
  if (!intraword && isWordChar(s[start - 1])) return -1; // snake_case_name is not emphasis
  const ch = delim[0];
  let j = open;
  while (j < s.length) {
    if (s[j] === '`') {
      const code = codeSpan(s, j); // delimiters inside code spans do not count
      if (code) {
        j = code.end;
        continue;
      }
    }
    if (s[j] !== ch) {
      j++;
      continue;
    }
    let runEnd = j;
    while (s[runEnd] === ch) runEnd++;
    const run = runEnd - j;
    if (j > open && !isSpace(s[j - 1])) {
      if (run === delim.length && (intraword || !isWordChar(s[runEnd]))) return j;
      // `***x***`: the outer `**` closes with the last two of the run; the inner `*` gets the first.
      if (run > delim.length && delim.length === 2) return runEnd - 2;
    }
    j = runEnd;
  }
  return -1;
}

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
 * Chunks the Markdown (fence-aware, numbered) and renders each chunk. Rendering only removes characters, so a
 * chunk over the limit is rare; when one is, everything is re-chunked a little smaller so numbering stays whole.
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
