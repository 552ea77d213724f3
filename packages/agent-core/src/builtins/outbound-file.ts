/**
 * Turning what the agent wants to send — a URL, text it wrote, base64 bytes — into a file for the reply: fetched
 * through web_fetch's guarded client (every hop's address checked, the download cut at the size limit), its
 * type read from the bytes themselves (magic-bytes.js) before any name or header is believed, then checked
 * against the operator's limits (HERALD_OUTBOUND_FILE_MAX_MB, HERALD_OUTBOUND_FILE_TYPES). Used by send_file and
 * by the gateway for pictures in a reply.
 */
import { filetypeinfo } from 'magic-bytes.js';
import type { NewTurnFile, TurnFileKind } from '../store/turn-files.js';
import { ToolInputError } from './context.js';
import { fetchUrl, type WebFetchOptions } from './web-fetch.js';

export interface OutboundFileLimits {
  /** Largest file, in bytes. */
  maxBytes: number;
  /** MIME types allowed, exact (`application/pdf`) or by family (`image/*`). */
  types: readonly string[];
}

export const DEFAULT_OUTBOUND_FILE_LIMITS: OutboundFileLimits = {
  maxBytes: 20 * 1024 * 1024,
  types: ['image/*', 'audio/*', 'video/*', 'text/*', 'application/pdf', 'application/json', 'application/zip'],
};

/** Why a file cannot be sent: a message for the model (and, for pictures in a reply, for the log). */
export class OutboundFileError extends ToolInputError {
  override name = 'OutboundFileError';
}

/** Pictures every platform shows inline. */
const PICTURES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Text files by extension: they have no magic bytes to read. */
const TEXT_TYPES: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  html: 'text/html',
  htm: 'text/html',
  xml: 'application/xml',
  svg: 'image/svg+xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  js: 'text/javascript',
  ts: 'text/x-typescript',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  css: 'text/css',
  ics: 'text/calendar',
  log: 'text/plain',
  sql: 'application/sql',
};
const EXTENSION_OF: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'text/markdown': 'md',
  'application/json': 'json',
  'application/zip': 'zip',
  'video/mp4': 'mp4',
};
const MAX_NAME_LENGTH = 100;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

export function typeAllowed(mimeType: string, types: readonly string[]): boolean {
  const t = mimeType.toLowerCase();
  return types.some((p) => {
    const pattern = p.trim().toLowerCase();
    return pattern === '*/*' || pattern === t || (pattern.endsWith('/*') && t.startsWith(pattern.slice(0, -1)));
  });
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** A plain file name: no directories, no control characters, not too long; an extension for the type. */
function cleanFileName(raw: string | undefined, mimeType: string): string {
  // eslint-disable-next-line no-control-regex
  let name =
    (raw ?? '')
      .split(/[\\/]/)
      .pop()
      ?.replace(/[\u0000-\u001f\u007f"<>|:*?]/g, '')
      .trim() ?? '';
  if (name === '' || name === '.' || name === '..') name = 'file';
  const ext = EXTENSION_OF[mimeType];
  if (ext && extensionOf(name) === '') name = `${name}.${ext}`;
  if (name.length > MAX_NAME_LENGTH) {
    const suffix = extensionOf(name);
    name = `${name.slice(0, MAX_NAME_LENGTH - suffix.length - 1)}.${suffix}`;
  }
  return name;
}

/**
 * The type the bytes say they are. Binary data is known by its signature alone (an executable called
 * notes.txt stays opaque: application/octet-stream); text, which has none, by what the caller says (a declared
 * type, the name's extension), else text/plain.
 */
function detectType(data: Buffer, declared: string | undefined, name: string | undefined): string {
  const sniffed = filetypeinfo(data.subarray(0, 4100)).find((t) => t.mime !== undefined)?.mime;
  if (sniffed) return sniffed;
  if (!isUtf8Text(data)) return 'application/octet-stream';
  // A picture type the bytes do not bear out is not believed: the platform would refuse it as a picture.
  const given = declared?.split(';')[0].trim().toLowerCase();
  if (given && given !== 'application/octet-stream' && !PICTURES.has(given)) return given;
  return TEXT_TYPES[extensionOf(name ?? '')] ?? 'text/plain';
}

function isUtf8Text(data: Buffer): boolean {
  const sample = data.subarray(0, 4096);
  if (sample.includes(0)) return false;
  try {
    // `stream`: a character cut at the end of the sample is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: sample.length < data.length });
    return true;
  } catch {
    return false;
  }
}

function kindOf(mimeType: string): TurnFileKind {
  if (PICTURES.has(mimeType)) return 'image';
  if (mimeType.startsWith('audio/')) return 'audio';
  return 'file';
}

export interface FileHints {
  name?: string;
  mimeType?: string;
  caption?: string;
  /** Send as a document even when it is a picture (the user wants the original, not a compressed photo). */
  asDocument?: boolean;
}

/** Checks size and type and names the file; throws OutboundFileError with what is wrong. */
export function outboundFile(data: Buffer, hints: FileHints, limits: OutboundFileLimits): NewTurnFile {
  if (data.length === 0) throw new OutboundFileError('the file is empty');
  if (data.length > limits.maxBytes) {
    throw new OutboundFileError(`the file is ${formatBytes(data.length)}; files sent to the chat may be at most ${formatBytes(limits.maxBytes)}`);
  }
  const mimeType = detectType(data, hints.mimeType, hints.name);
  if (!typeAllowed(mimeType, limits.types)) {
    throw new OutboundFileError(`files of type ${mimeType} may not be sent (allowed: ${limits.types.join(', ')})`);
  }
  const kind = hints.asDocument ? 'file' : kindOf(mimeType);
  const caption = hints.caption?.trim();
  return { kind, name: cleanFileName(hints.name, mimeType), mimeType, data, ...(caption && { caption }) };
}

/** Downloads `url` (public addresses only, unless the operator allowed private ones) as a file to send. */
export async function outboundFileFromUrl(
  url: string,
  hints: FileHints,
  limits: OutboundFileLimits,
  fetchOpts: WebFetchOptions,
  signal: AbortSignal,
): Promise<NewTurnFile> {
  // One byte over the limit tells "too large" from "exactly the limit".
  const page = await fetchUrl(url, { ...fetchOpts, maxBytes: limits.maxBytes + 1 }, signal);
  if (page.status < 200 || page.status >= 300) throw new OutboundFileError(`${page.url} answered ${page.status} ${page.statusText}`.trim());
  if (page.truncated)
    throw new OutboundFileError(`the file at ${page.url} is larger than ${formatBytes(limits.maxBytes)}, the most a file sent to the chat may have`);
  const last = new URL(page.url).pathname.split('/').pop() ?? '';
  let fromUrl = last;
  try {
    fromUrl = decodeURIComponent(last);
  } catch {
    // a malformed escape: keep the name as it was written
  }
  return outboundFile(page.body, { ...hints, name: hints.name ?? (fromUrl || undefined), mimeType: hints.mimeType ?? page.contentType }, limits);
}
