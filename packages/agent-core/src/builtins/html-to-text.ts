/**
 * HTML to readable text for the model: scripts, styles and comments go, block elements become line breaks,
 * tags are stripped, entities decoded, whitespace collapsed. Not a browser: it aims at the words of a page,
 * cheaply and without a dependency.
 */

/** Elements whose content is never text a reader sees. */
const INVISIBLE = ['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object'];
/** Elements that start a new line. */
const BLOCK =
  /<\/?(?:p|div|section|article|header|footer|main|nav|aside|h[1-6]|ul|ol|table|tr|blockquote|pre|form|fieldset|dl|dt|dd|figure|figcaption|hr)\b[^>]*>/gi;

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  mdash: '—',
  ndash: '–',
  hellip: '…',
  laquo: '«',
  raquo: '»',
  ldquo: '“',
  rdquo: '”',
  lsquo: '‘',
  rsquo: '’',
  bull: '•',
  middot: '·',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  deg: '°',
  times: '×',
  divide: '÷',
  para: '¶',
  sect: '§',
  shy: '',
  zwj: '\u200d',
  zwnj: '\u200c',
  thinsp: ' ',
  ensp: ' ',
  emsp: ' ',
  auml: 'ä',
  ouml: 'ö',
  uuml: 'ü',
  Auml: 'Ä',
  Ouml: 'Ö',
  Uuml: 'Ü',
  szlig: 'ß',
  eacute: 'é',
  egrave: 'è',
  agrave: 'à',
  aacute: 'á',
  ccedil: 'ç',
  ntilde: 'ñ',
  oacute: 'ó',
  iacute: 'í',
  uacute: 'ú',
  larr: '←',
  rarr: '→',
};

/** Decodes named, decimal and hexadecimal character references; unknown names are left as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z][a-z0-9]*);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      // Out-of-range and surrogate code points are invalid in HTML too; they become the replacement character.
      const valid = Number.isInteger(code) && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
      return valid ? String.fromCodePoint(code) : '\uFFFD';
    }
    return NAMED_ENTITIES[ref] ?? NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** The page's <title>, decoded, if it has one. */
export function htmlTitle(html: string): string | null {
  const m = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const title = m ? collapse(decodeEntities(m[1].replace(/<[^>]*>/g, ''))) : '';
  return title || null;
}

function collapse(text: string): string {
  return text
    .replace(/[ \t\f\v\r\u00a0]+/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function htmlToText(html: string): string {
  let s = html.replace(/<!--[\s\S]*?-->/g, ' ');
  for (const tag of INVISIBLE) s = s.replace(new RegExp(`<${tag}\\b[\\s\\S]*?</${tag}\\s*>`, 'gi'), ' ');
  s = s.replace(/<head\b[\s\S]*?<\/head\s*>/gi, ' ');
  // Source line breaks mean nothing in HTML; only the markup decides where lines break.
  s = s.replace(/\s+/g, ' ');
  s = s
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<\/t[dh]\s*>/gi, ' | ')
    .replace(BLOCK, '\n\n')
    .replace(/<[^>]*>/g, '');
  return collapse(decodeEntities(s));
}
