/** Request and answer plumbing of the Matrix stand-in: JSON bodies, error bodies, and the route table type. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readRaw } from '../media/multipart.js';
import type { JsonObject } from './types.js';
import { MatrixError } from './world.js';

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Decoded path segments the route's pattern captured. */
  params: string[];
  /** The request body as bytes (read once). */
  raw(): Promise<Buffer>;
  /** The body as a JSON object: 400 M_NOT_JSON when it is not JSON, M_BAD_JSON when it is not an object. */
  json(): Promise<JsonObject>;
  /** Resolves when the client goes away before the answer (long polls stop waiting). */
  closed: Promise<void>;
  isClosed(): boolean;
}

/** A route answers a JSON object (200), or writes the response itself and returns undefined. */
type Handler = (ctx: Ctx) => Promise<JsonObject | Buffer | undefined | object> | JsonObject | undefined | object;

export interface Route {
  method: string;
  /** Matched against the path; capture groups are URL-decoded into `params`. */
  pattern: RegExp;
  handler: Handler;
  /** Answered without an access token (/versions). */
  public?: boolean;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** `{errcode, error, ...}` with the status; 429s also carry Retry-After (seconds, rounded up) as v1.10+ servers do. */
export function sendError(res: ServerResponse, err: MatrixError): void {
  const headers: Record<string, string> = {};
  const retry = err.extra.retry_after_ms;
  if (err.status === 429 && typeof retry === 'number') headers['retry-after'] = String(Math.ceil(retry / 1000));
  sendJson(res, err.status, { errcode: err.errcode, error: err.error, ...err.extra }, headers);
}

export function makeCtx(req: IncomingMessage, res: ServerResponse, url: URL, params: string[]): Ctx {
  let body: Promise<Buffer> | undefined;
  let closed = false;
  const closedPromise = new Promise<void>((resolve) =>
    res.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  const raw = () => (body ??= readRaw(req));
  return {
    req,
    res,
    url,
    params,
    raw,
    closed: closedPromise,
    isClosed: () => closed,
    json: async () => {
      const bytes = await raw();
      let parsed: unknown;
      try {
        parsed = JSON.parse(bytes.length === 0 ? '{}' : bytes.toString('utf8'));
      } catch {
        throw new MatrixError(400, 'M_NOT_JSON', 'Content not JSON.');
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new MatrixError(400, 'M_BAD_JSON', 'Content must be a JSON object.');
      return parsed as JsonObject;
    },
  };
}

/** The access token from `Authorization: Bearer` or the deprecated `access_token` query parameter. */
export function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length);
  return url.searchParams.get('access_token') ?? undefined;
}
