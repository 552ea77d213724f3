/**
 * Hostile values shared by the fuzz suites: odd strings (lone surrogates, control and invisible characters,
 * huge ones), JSON of any shape, deep nesting, bytes that are not JSON, wrong content types, and a corrupter
 * that replaces one field of a well-formed payload with a value of the wrong type.
 */
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A request body as sent on the wire, with its content type (null: no content-type header at all). */
export interface RawBody {
  body: string | Uint8Array<ArrayBuffer>;
  contentType: string | null;
}

const LONE_SURROGATES = fc.array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 8 }).map((codes) => String.fromCharCode(...codes));
/** Characters that break naive parsers and renderers: NUL, controls, BOM, zero-width, bidi overrides, combining marks. */
const TRICKY_CHARS = fc.constantFrom(
  '\u0000',
  '\u0007',
  '\b',
  '\r',
  '\n',
  '\t',
  '\u001b[31m',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\u200b',
  '\u200d',
  '\u202e',
  '\u0301\u0301\u0301',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '𝕳',
  '﷽',
);
/** Things that mean something to Herald or its platforms: commands, mentions, markup, escapes. */
const LOADED_WORDS = fc.constantFrom(
  '/start',
  '/stop',
  '/new',
  '/help@other_bot',
  '@herald_test_bot',
  '<@U0HERALDBOT>',
  '<@!1>',
  '<#C1>',
  '&lt;',
  '&amp;',
  '<b>',
  '```',
  '*_~`',
  '%00',
  '\\u0000',
  '${x}',
  '{{x}}',
  '__proto__',
  'constructor',
  'toString',
  'NaN',
  '-0',
  '1e400',
);

/** Short strings of every kind, lone surrogates and control characters included. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  LONE_SURROGATES,
  fc.array(fc.oneof(TRICKY_CHARS, LOADED_WORDS, fc.string({ maxLength: 5 })), { maxLength: 8 }).map((parts) => parts.join('')),
);

/** Mostly odd strings; now and then one of 10 k – 100 k characters. */
export const oddOrHugeString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: oddString, weight: 20 },
  { arbitrary: fc.tuple(fc.integer({ min: 10_000, max: 100_000 }), fc.constantFrom('x', '𝕳', '\ud800', ' ', '@')).map(([n, c]) => c.repeat(n)), weight: 1 },
);

/** Any JSON value, a little deep. */
export const anyJson: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;

/** Numbers JSON can carry that are not the small safe integers ids and offsets are. */
const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(-1, 0.5, -0, 2 ** 53, -(2 ** 63), 1e300, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A value whose JSON type differs from `like`'s (a string for a number, an object for an array, …). */
function wrongTypeFor(like: unknown): fc.Arbitrary<Json> {
  const kinds: Array<fc.Arbitrary<Json>> = [];
  if (typeof like !== 'string') kinds.push(oddString);
  if (typeof like !== 'number') kinds.push(oddNumber);
  if (typeof like === 'number') kinds.push(fc.constantFrom(0.5, 2 ** 60, -(2 ** 63), 1e300)); // numbers, but not safe integers
  if (typeof like !== 'boolean') kinds.push(fc.boolean());
  if (like !== null) kinds.push(fc.constant(null));
  if (!Array.isArray(like)) kinds.push(fc.array(anyJson, { maxLength: 3 }));
  if (typeof like !== 'object' || like === null || Array.isArray(like)) kinds.push(fc.dictionary(oddString, anyJson, { maxKeys: 3 }));
  return fc.oneof(...kinds);
}

/** A path into a JSON value: object keys and array indexes. */
export type JsonPath = ReadonlyArray<string | number>;

function getPath(value: Json, path: JsonPath): Json | undefined {
  let v: Json | undefined = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, Json>)[key];
  }
  return v;
}

/** A deep copy of `value` with the value at `path` replaced. */
export function setPath(value: Json, path: JsonPath, replacement: Json): Json {
  if (path.length === 0) return replacement;
  const copy = structuredClone(value) as Record<string | number, Json>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  parent[path[path.length - 1]] = replacement;
  return copy as Json;
}

/** `base` with the field at one of `paths` replaced by a value of the wrong type; returns which path too. */
export function corruptOneOf(base: Json, paths: readonly JsonPath[]): fc.Arbitrary<{ value: Json; path: JsonPath }> {
  return fc.constantFrom(...paths).chain((path) => wrongTypeFor(getPath(base, path)).map((bad) => ({ value: setPath(base, path, bad), path })));
}

/** JSON text nested `depth` levels deep: arrays, objects or a mix, optionally inside a field of an object. */
export const deeplyNestedJson: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 1_000, max: 100_000 }), fc.constantFrom('array', 'object', 'mixed'))
  .map(([depth, kind]) => {
    const open = kind === 'array' ? '[' : kind === 'object' ? '{"a":' : '[{"a":';
    const close = kind === 'array' ? ']' : kind === 'object' ? '}' : '}]';
    const n = kind === 'mixed' ? Math.floor(depth / 2) : depth;
    return `${open.repeat(n)}1${close.repeat(n)}`;
  });

/** Text that JSON.parse refuses: cut-off JSON, random characters, bytes that are not UTF-8. */
export const notJson: fc.Arbitrary<string | Uint8Array<ArrayBuffer>> = fc.oneof(
  anyJson.map((v) => JSON.stringify({ v })).chain((s) => fc.integer({ min: 1, max: s.length - 1 }).map((cut) => s.slice(0, cut))),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }).filter((s) => !parses(s)),
  fc
    .uint8Array({ minLength: 1, maxLength: 300 })
    .filter((b) => !parses(Buffer.from(b).toString('utf8')))
    .map((b) => new Uint8Array(b)),
  fc.constantFrom('{', '}', '[1,]', '{"a":1,}', "{'a':1}", 'NaN', 'undefined', '{"a":1}{"b":2}', '\ufeff{}x', '{"__proto__":{"x":1}}x'),
);

/** Content types a JSON endpoint does not take, or takes wrongly labelled. */
export const foreignContentType: fc.Arbitrary<string | null> = fc.oneof(
  fc.constantFrom(
    null,
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/octet-stream',
    'application/xml',
    'application/json; charset=utf-16',
    'application/jsonx',
    '*/*',
    ';',
    'text/html; charset=evil',
  ),
  fc.stringMatching(/^[a-z]{1,10}\/[a-z0-9.+-]{1,20}$/),
);

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A JSON request body as a client sends it. */
export function jsonBody(value: unknown): RawBody {
  return { body: JSON.stringify(value), contentType: 'application/json' };
}

/** `fetch` body and headers for a RawBody. */
export function requestInit(raw: RawBody, headers: Record<string, string> = {}): RequestInit {
  const h = new Headers(headers);
  if (raw.contentType !== null) h.set('content-type', raw.contentType);
  // Without a content type fetch would label a string body text/plain; a Blob with no type sends none.
  const body = raw.contentType === null ? new Blob([raw.body]) : raw.body;
  return { method: 'POST', headers: h, body };
}
