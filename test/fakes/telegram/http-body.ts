/**
 * Request parameters the way the Bot API takes them: a JSON body, form-encoded or multipart fields (files
 * included), or the query string. Object-valued parameters arrive as JSON strings in the last three and are
 * decoded.
 */
import type { IncomingMessage } from 'node:http';
import { isMultipart, parseMultipart, readRaw, type UploadedPart } from '../media/multipart.js';
import type { Json, JsonObject } from './state.js';

/** Parameters sent as JSON strings in form-encoded and multipart requests. */
const JSON_FIELDS = new Set([
  'reply_parameters',
  'allowed_updates',
  'commands',
  'reaction',
  'reply_markup',
  'entities',
  'caption_entities',
  'link_preview_options',
  'scope',
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

export interface RequestBody {
  params: JsonObject;
  /** Multipart file parts (sendPhoto's `photo`, sendDocument's `document`, …). */
  files: UploadedPart[];
  /** Bytes in the body, for the upload size limit. */
  size: number;
}

export async function readBody(req: IncomingMessage): Promise<RequestBody> {
  const body = await readRaw(req);
  if (body.length === 0) return { params: {}, files: [], size: 0 };
  const type = req.headers['content-type'] ?? '';
  if (isMultipart(type)) {
    const { fields, files } = await parseMultipart(body, type);
    const params: JsonObject = {};
    for (const [k, v] of Object.entries(fields)) params[k] = coerce(k, v);
    return { params, files, size: body.length };
  }
  const raw = body.toString('utf8');
  if (type.startsWith('application/json')) {
    const parsed = JSON.parse(raw) as Json;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('body is not an object');
    return { params: parsed, files: [], size: body.length };
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const params: JsonObject = {};
    for (const [k, v] of new URLSearchParams(raw)) params[k] = coerce(k, v);
    return { params, files: [], size: body.length };
  }
  throw new Error(`unsupported content-type ${type}`);
}
