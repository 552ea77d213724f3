/**
 * Markdown → Discord. Discord renders most Markdown natively (bold, italics, strikethrough, code, fences, quotes,
 * lists, `#`–`###` headings, masked links), so this only adapts what it lacks:
 *  - pipe tables → an aligned monospace block (Discord shows raw pipes otherwise);
 *  - `####`–`######` headings → bold lines (Discord prints the hashes);
 *  - thematic breaks (`---`, `***`, `___`) → a drawn line (Discord prints them literally);
 *  - images `![alt](url)` → links (Discord would show the `!`; it unfurls the link itself).
 * Fenced code is left untouched.
 */

const FENCE_RE = /^\s*(```+|~~~+)/;
const FENCE_CLOSE_RE = /^\s*(```+|~~~+)\s*$/;
const DEEP_HEADING_RE = /^\s{0,3}#{4,6}\s+(.+?)\s*#*\s*$/;
const THEMATIC_BREAK_RE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const TABLE_SEPARATOR_RE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
const IMAGE_RE = /!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const INLINE_CODE_RE = /(`+)[\s\S]*?\1/g;
const DRAWN_RULE = '──────────';

export function formatForDiscord(markdown: string): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  let fence: string | null = null;

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (fence !== null) {
      out.push(line);
      const close = FENCE_CLOSE_RE.exec(line);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      continue;
    }
    const opening = FENCE_RE.exec(line);
    if (opening) {
      fence = opening[1];
      out.push(line);
      continue;
    }
    if (startsTable(line, lines[i + 1])) {
      const rows = [splitRow(line)];
      i += 2;
      while (i < lines.length && isTableRow(lines[i])) rows.push(splitRow(lines[i++]));
      i -= 1;
      out.push(...renderTable(rows));
      continue;
    }
    const heading = DEEP_HEADING_RE.exec(line);
    if (heading) {
      out.push(`**${heading[1]}**`);
      continue;
    }
    if (THEMATIC_BREAK_RE.test(line)) {
      out.push(DRAWN_RULE);
      continue;
    }
    out.push(outsideInlineCode(line, imagesToLinks));
  }
  return out.join('\n');
}

function imagesToLinks(text: string): string {
  return text.replace(IMAGE_RE, (_m, alt: string, url: string) => (alt.trim() ? `[${alt.trim()}](${url})` : url));
}

/** Applies `fn` to the parts of a line that are not inline code spans. */
function outsideInlineCode(line: string, fn: (text: string) => string): string {
  let result = '';
  let last = 0;
  for (const m of line.matchAll(INLINE_CODE_RE)) {
    result += fn(line.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return result + fn(line.slice(last));
}

/** GFM: a header row followed by a delimiter row with the same number of cells. */
function startsTable(header: string, next: string | undefined): boolean {
  if (next === undefined || !isTableRow(header) || !TABLE_SEPARATOR_RE.test(next) || !next.includes('|')) return false;
  return splitRow(header).length === splitRow(next).length;
}

function isTableRow(line: string): boolean {
  const t = line.trim();
  return t.includes('|') && t.length > 1;
}

function splitRow(line: string): string[] {
  let t = line.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  // Split on pipes that are not escaped; drop emphasis markers that would show literally in a code block.
  return t.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|').replace(/\*\*|__|`/g, ''));
}

function renderTable(rows: string[][]): string[] {
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const render = (r: string[]): string => widths.map((w, c) => (r[c] ?? '').padEnd(w)).join(' | ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(Math.max(w, 1))).join('-+-');
  return ['```', render(rows[0]), rule, ...rows.slice(1).map(render), '```'];
}
