/**
 * Session titles: cleaning what a user (or a model) typed, and the `name`, `name #2`, `name #3` lineage that
 * compression and /resume use.
 */

export const MAX_TITLE_LENGTH = 100;

// Controls other than whitespace, which is collapsed to a space below instead so words do not run together.
const CONTROL_CHARS = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F]/g;
// Invisible characters that make two identical-looking titles differ, plus bidi overrides that can make a
// title display as something else: zero-width (U+200B–U+200F), line/paragraph separators and embeddings
// (U+2028–U+202E), word joiner and invisible operators and isolates (U+2060–U+2069), BOM (U+FEFF).
const INVISIBLE_CHARS = /[\u200B-\u200F\u2028-\u202E\u2060-\u2069\uFEFF]/g;
const WHITESPACE_RUN = /\s+/g;
const LINEAGE_SUFFIX = /^(.*?) #(\d+)$/s;

/** The cleaned title, or null when nothing printable is left. */
export function sanitizeTitle(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  let title = raw.replace(CONTROL_CHARS, '').replace(INVISIBLE_CHARS, '').replace(WHITESPACE_RUN, ' ').trim();
  if (title.length > MAX_TITLE_LENGTH) {
    let cut = MAX_TITLE_LENGTH;
    // Never split a surrogate pair: half an emoji is not a character.
    const last = title.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut--;
    title = title.slice(0, cut).trimEnd();
  }
  return title === '' ? null : title;
}

/** `name #3` → `{ base: 'name', number: 3 }`; a title without a suffix is number 1 of its own lineage. */
export function parseLineageTitle(title: string): { base: string; number: number } {
  const match = LINEAGE_SUFFIX.exec(title);
  if (match && match[1] !== '') return { base: match[1], number: Number(match[2]) };
  return { base: title, number: 1 };
}

/**
 * The next free title in `base`'s lineage, given the titles that already exist (only `base` itself and
 * `base #N` count). `base` may carry a suffix already: the lineage is that of the name without it.
 */
export function nextTitleInLineage(base: string, existingTitles: readonly string[]): string {
  const root = parseLineageTitle(base).base;
  let highest = 0;
  for (const title of existingTitles) {
    if (title === root) highest = Math.max(highest, 1);
    else if (isNumberedVariant(title, root)) highest = Math.max(highest, parseLineageTitle(title).number);
  }
  if (highest === 0) return root;
  return `${root} #${highest + 1}`;
}

/** True for `root #N` (N digits), never for `root #2b` or `rooted #2`. */
export function isNumberedVariant(title: string, root: string): boolean {
  const prefix = `${root} #`;
  return title.length > prefix.length && title.startsWith(prefix) && /^\d+$/.test(title.slice(prefix.length));
}
