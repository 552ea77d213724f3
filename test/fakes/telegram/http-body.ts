/**
 * Request parameters the way the Bot API takes them: a JSON body, form-encoded or multipart text fields, or the
 * query string. Object-valued parameters arrive as JSON strings in the last three and are decoded.
 */
import type { IncomingMessage } from 'node:http';
import type { Json, JsonObject } from './state.js';

/** Parameters sent as JSON strings in form-encoded and multipart requests. */
const JSON_FIELDS = new Set([
  'reply_parameters', 'allowed_updates', 'commands', 'reaction', 'reply_markup', 'entities',
  'caption_entities', 'link_preview_options', 'scope',
]);

export function toInt(v: Json | undefined): number | undefined {
  return typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : undefined;
}

function coerce(key: string, value: string): Json {
  if (!JSON_FIELDS.has(key)) return value;
  try {
    return JSON.parse(value) as Json;
  } catch {
    return value;
  }
}

export function queryParams(url: URL): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of url.searchParams) out[k] = coerce(k, v);
  return out;
}

export async function readBody(req: IncomingMessage): Promise<JsonObject> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  if (raw.length === 0) return {};
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('application/json')) {
    const parsed = JSON.parse(raw) as Json;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('body is not an object');
    return parsed;
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const out: JsonObject = {};
    for (const [k, v] of new URLSearchParams(raw)) out[k] = coerce(k, v);
    return out;
  }
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
  if (type.startsWith('multipart/form-data') && boundary) {
    const out: JsonObject = {};
    for (const part of raw.split(`--${boundary[1] ?? boundary[2]}`)) {
      const m = /name="([^"]+)"[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n([\s\S]*)\r\n$/.exec(part);
      if (m && !/filename=/.test(part)) out[m[1]] = coerce(m[1], m[2]);
    }
    return out;
  }
  throw new Error(`unsupported content-type ${type}`);
}
