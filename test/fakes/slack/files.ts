/**
 * Slack's files upload v2, the three steps @slack/web-api's `filesUploadV2` takes:
 *  1. files.getUploadURLExternal `{filename, length}` → `{upload_url, file_id}` (scope files:write; a length over
 *     the workspace's limit: `file_upload_size_restricted`);
 *  2. POST of the bytes (raw, or multipart as the SDK sends them) to upload_url → HTTP 200 `OK - <bytes>`; any other
 *     status is a failed upload;
 *  3. files.completeUploadExternal `{files: [{id, title}], channel_id, thread_ts?, initial_comment?}` shares the
 *     files in the conversation; a file never uploaded is `file_not_found`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMultipart, parseMultipart, readRaw } from '../media/multipart.js';
import type { ApiReply } from './reply.js';

/** Slack's own ceiling per file; workspaces may restrict uploads further (tests do, to hit the error cheaply). */
export const SLACK_MAX_FILE_BYTES = 1024 * 1024 * 1024;

interface PendingUpload {
  fileId: string;
  filename: string;
  length: number;
  data?: Buffer;
}

/** A file shared in a conversation by files.completeUploadExternal. */
export interface SharedFileRecord {
  id: string;
  channel: string;
  threadTs?: string;
  filename: string;
  title: string;
  initialComment?: string;
  data: Buffer;
}

export interface FilesState {
  /** Opaque upload URL token → the upload it is for. */
  pending: Map<string, PendingUpload>;
  shared: SharedFileRecord[];
  /** What the upload URLs point at: this stand-in's origin. */
  origin(): string;
  maxFileBytes: number;
}

const CHANNEL_RE = /^[CDG][A-Z0-9]+$/;
const ok = (body: Record<string, unknown> = {}): ApiReply => ({ status: 200, headers: {}, body: { ok: true, ...body } });
const fail = (error: string): ApiReply => ({ status: 200, headers: {}, body: { ok: false, error } });

function str(args: Record<string, unknown>, key: string): string | undefined {
  const v = args[key];
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

export function getUploadURLExternal(files: FilesState, args: Record<string, unknown>): ApiReply {
  const filename = str(args, 'filename');
  const length = Number(str(args, 'length'));
  if (filename === undefined || !Number.isInteger(length) || length <= 0) return fail('invalid_arguments');
  if (length > files.maxFileBytes) return fail('file_upload_size_restricted');
  const token = randomBytes(12).toString('hex');
  const fileId = `F${randomBytes(5).toString('hex').toUpperCase()}`;
  files.pending.set(token, { fileId, filename, length });
  return ok({ upload_url: `${files.origin()}/upload/v1/${token}`, file_id: fileId });
}

/** POST <origin>/upload/v1/<token>: no token needed, the URL is the credential. */
export async function receiveUpload(files: FilesState, token: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const upload = files.pending.get(token);
  const body = await readRaw(req);
  if (req.method !== 'POST' || !upload) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('Not Found');
    return;
  }
  const type = String(req.headers['content-type'] ?? '');
  upload.data = isMultipart(type) ? ((await parseMultipart(body, type)).files[0]?.data ?? Buffer.alloc(0)) : body;
  const text = `OK - ${upload.data.length}`;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The files named in completeUploadExternal, as JSON text (form body) or an array (JSON body). */
function filesArg(raw: unknown): Array<{ id: string; title?: string }> | null {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return null;
    }
  }
  if (!Array.isArray(value) || value.length === 0) return null;
  const out: Array<{ id: string; title?: string }> = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null || typeof (item as { id?: unknown }).id !== 'string') return null;
    const { id, title } = item as { id: string; title?: unknown };
    out.push({ id, ...(typeof title === 'string' && { title }) });
  }
  return out;
}

/** Shares the uploaded files; `post` stores the message that carries them and returns its ts. */
export function completeUploadExternal(
  files: FilesState,
  args: Record<string, unknown>,
  post: (channel: string, text: string, threadTs: string | undefined) => string,
): ApiReply {
  const wanted = filesArg(args.files);
  if (wanted === null) return fail('invalid_arguments');
  const channel = str(args, 'channel_id');
  if (channel !== undefined && !CHANNEL_RE.test(channel)) return fail('channel_not_found');
  const uploads = wanted.map((w) => [...files.pending.entries()].find(([, u]) => u.fileId === w.id));
  if (uploads.some((u) => u === undefined || u[1].data === undefined)) return fail('file_not_found');
  const threadTs = str(args, 'thread_ts');
  const comment = str(args, 'initial_comment');
  if (channel !== undefined) post(channel, comment ?? '', threadTs);
  const done = uploads.map((entry, i) => {
    const [token, upload] = entry as [string, PendingUpload];
    files.pending.delete(token);
    const title = wanted[i].title ?? upload.filename;
    if (channel !== undefined) {
      files.shared.push({
        id: upload.fileId,
        channel,
        filename: upload.filename,
        title,
        data: upload.data as Buffer,
        ...(threadTs !== undefined && { threadTs }),
        ...(comment !== undefined && { initialComment: comment }),
      });
    }
    return { id: upload.fileId, title };
  });
  return ok({ files: done });
}
