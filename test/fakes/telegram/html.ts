/**
 * Telegram's HTML parse mode, as the Bot API applies it: the supported tags and entities
 * (https://core.telegram.org/bots/api#html-style), the text left after parsing (which the 4096 limit counts, in
 * UTF-16 units) and Telegram's error messages for markup it refuses.
 */

export interface Entity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
}

export type HtmlParse = { ok: true; text: string; entities: Entity[] } | { ok: false; error: string };

const TAG_TYPES: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  'tg-emoji': 'custom_emoji',
  blockquote: 'blockquote',
};

const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

interface Open {
  name: string;
  start: number;
  attrs: Record<string, string>;
}

export function parseTelegramHtml(html: string): HtmlParse {
  let text = '';
  const entities: Entity[] = [];
  const stack: Open[] = [];
  const byteOffset = (i: number): number => Buffer.byteLength(html.slice(0, i));
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '&') {
      const m = /^&(?:(lt|gt|amp|quot)|#(\d{1,7})|#x([\da-fA-F]{1,6}));/.exec(html.slice(i, i + 12));
      if (m) {
        const code = m[2] !== undefined ? Number(m[2]) : m[3] !== undefined ? parseInt(m[3], 16) : -1;
        text += m[1] !== undefined ? NAMED_ENTITIES[m[1]] : String.fromCodePoint(code);
        i += m[0].length;
        continue;
      }
      text += c; // unknown entities are left as written
      i++;
      continue;
    }
    if (c !== '<') {
      text += c;
      i++;
      continue;
    }
    const close = html.indexOf('>', i);
    if (html[i + 1] === '/') {
      if (close === -1) return fail(`Unclosed end tag at byte offset ${byteOffset(i)}`);
      const name = html
        .slice(i + 2, close)
        .trim()
        .toLowerCase();
      const top = stack.pop();
      if (top === undefined) return fail(`Unexpected end tag at byte offset ${byteOffset(i)}`);
      if (top.name !== name) {
        return fail(`Unmatched end tag at byte offset ${byteOffset(i)}, expected "</${top.name}>", found "</${name}>"`);
      }
      const entity = toEntity(top, text.length, stack);
      if (entity) entities.push(entity);
      i = close + 1;
      continue;
    }
    const nameMatch = /^[a-zA-Z][a-zA-Z0-9-]*/.exec(html.slice(i + 1));
    const name = nameMatch ? nameMatch[0].toLowerCase() : '';
    if (!(name in TAG_TYPES)) return fail(`Unsupported start tag "${name}" at byte offset ${byteOffset(i)}`);
    if (close === -1) return fail(`Unclosed start tag at byte offset ${byteOffset(i)}`);
    const attrs = parseAttributes(html.slice(i + 1 + name.length, close));
    if (attrs === null) return fail(`Unclosed start tag at byte offset ${byteOffset(i)}`);
    if (name === 'span' && attrs.class !== 'tg-spoiler') {
      return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(i)}`);
    }
    if (name === 'a' && !attrs.href) return fail(`Tag "a" must have attribute "href" at byte offset ${byteOffset(i)}`);
    stack.push({ name, start: text.length, attrs });
    i = close + 1;
  }
  const open = stack.pop();
  if (open) return fail(`Can't find end tag corresponding to start tag "${open.name}"`);
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { ok: true, text, entities };
}

function fail(error: string): HtmlParse {
  return { ok: false, error };
}

function toEntity(open: Open, end: number, outer: readonly Open[]): Entity | null {
  const length = end - open.start;
  const type = TAG_TYPES[open.name];
  if (length === 0) return null; // Telegram drops empty entities
  // <pre><code class="language-x"> is one pre entity with a language, not pre + code.
  if (open.name === 'code' && outer.at(-1)?.name === 'pre') {
    const lang = /^language-(.+)$/.exec(open.attrs.class ?? '')?.[1];
    if (lang) outer.at(-1)!.attrs['data-language'] = lang;
    return null;
  }
  const entity: Entity = { type, offset: open.start, length };
  if (open.name === 'a') entity.url = open.attrs.href;
  if (open.name === 'pre' && open.attrs['data-language']) entity.language = open.attrs['data-language'];
  if (open.name === 'tg-emoji' && open.attrs['emoji-id']) entity.custom_emoji_id = open.attrs['emoji-id'];
  return entity;
}

/** ` href="x" class='y' expandable` -> record; null when the attribute syntax is broken. */
function parseAttributes(s: string): Record<string, string> | null {
  const attrs: Record<string, string> = {};
  const re = /\s*([a-zA-Z][\w-]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/y;
  let pos = 0;
  while (pos < s.length) {
    if (/^\s*\/?\s*$/.test(s.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return null;
    attrs[m[1].toLowerCase()] = decodeAttr(m[2] ?? m[3] ?? m[4] ?? '');
    pos = re.lastIndex;
  }
  return attrs;
}

function decodeAttr(v: string): string {
  return v.replace(/&(lt|gt|amp|quot);/g, (_, n: string) => NAMED_ENTITIES[n]);
}
