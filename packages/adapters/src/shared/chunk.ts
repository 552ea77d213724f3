/**
 * Code-fence-aware chunking shared by every adapter.
 *
 * Splits at newlines where it can, closes an open ``` fence at the end of a chunk and reopens it (with its
 * language) at the start of the next, and appends ` (i/N)` to every chunk when there is more than one.
 * Lengths are in UTF-16 code units (what Telegram, Discord and Slack count); surrogate pairs are never split.
 */

const FENCE_RE = /^\s*(```+|~~~+)\s*([\w+#.-]*)\s*$/;

/** Room kept for the ` (i/N)` suffix; enough for up to 9999 chunks. */
const SUFFIX_RESERVE = ' (9999/9999)'.length;

interface Fence {
  marker: string;
  lang: string;
}

export function chunkMessage(text: string, limit: number): string[] {
  if (limit < 40) throw new RangeError(`chunk limit ${limit} is too small`);
  if (text.length <= limit) return [text];

  const chunks: string[] = [];
  let current = '';
  let fence: Fence | null = null; // fence open at the end of `current`

  const budget = (): number => {
    // Room left in this chunk, keeping space for the suffix and for closing an open fence.
    const close = fence ? 1 + fence.marker.length : 0;
    return limit - SUFFIX_RESERVE - close - current.length;
  };

  const flush = (): void => {
    if (current.length === 0) return;
    chunks.push(fence ? `${current}\n${fence.marker}` : current);
    current = fence ? `${fence.marker}${fence.lang}` : '';
  };

  const appendLine = (line: string): void => {
    const sep = current.length > 0 ? 1 : 0;
    if (sep + line.length <= budget()) {
      current += (sep ? '\n' : '') + line;
      return;
    }
    // Does not fit: start a new chunk, then split the line itself if it is still too long.
    const reopenOnly = fence ? `${fence.marker}${fence.lang}` : '';
    if (current.length > 0 && current !== reopenOnly) flush();
    let rest = line;
    while (rest.length > 0) {
      const sep2 = current.length > 0 ? 1 : 0;
      const room = budget() - sep2;
      if (rest.length <= room) {
        current += (sep2 ? '\n' : '') + rest;
        return;
      }
      const cut = cutPoint(rest, room);
      current += (sep2 ? '\n' : '') + rest.slice(0, cut);
      rest = rest.slice(cut).replace(/^ /, '');
      flush();
    }
  };

  for (const line of text.split('\n')) {
    appendLine(line);
    const m = FENCE_RE.exec(line);
    if (m) {
      if (fence === null) fence = { marker: m[1], lang: m[2] };
      else if (m[1].startsWith(fence.marker[0]) && m[1].length >= fence.marker.length && m[2] === '') fence = null;
    }
  }
  if (current.length > 0) chunks.push(fence ? `${current}\n${fence.marker}` : current);

  if (chunks.length === 1) return chunks;
  // A closing fence line must stay bare (CommonMark), so after one the suffix goes on its own line.
  return chunks.map((c, i) => `${c}${FENCE_RE.test(c.slice(c.lastIndexOf('\n') + 1)) ? '\n' : ' '}(${i + 1}/${chunks.length})`);
}

/** Where to cut a too-long line: the last space in range if there is a reasonable one, never inside a surrogate pair. */
function cutPoint(s: string, room: number): number {
  let cut = Math.max(1, room);
  const space = s.lastIndexOf(' ', cut);
  if (space > room * 0.6) cut = space;
  const code = s.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // high surrogate at the end: keep the pair together
  return Math.max(1, cut);
}

/** True when every ``` fence in the text is closed. Used by tests and by delivery sanity checks. */
export function fencesBalanced(text: string): boolean {
  let open: string | null = null;
  for (const line of text.split('\n')) {
    const m = FENCE_RE.exec(line);
    if (!m) continue;
    if (open === null) open = m[1];
    else if (m[2] === '' && m[1][0] === open[0] && m[1].length >= open.length) open = null;
  }
  return open === null;
}
