/**
 * A small client for the Graph API calls the Cloud API needs, on Node's fetch: JSON calls, media upload
 * (multipart), media look-up. Meta's own Node SDK for the Cloud API is archived; these few calls are plain REST.
 * Each call is tried once: delivery owns retries (out/delivery.ts), so rate limits surface as RateLimitedError.
 */
import { NetworkError, PlatformError } from '../errors.js';
import { graphErrorOf, toGraphError } from './graph-errors.js';
import { WHATSAPP_REQUEST_TIMEOUT_MS } from './config.js';

export interface GraphClientOptions {
  apiUrl: string;
  accessToken: string;
  timeoutMs?: number;
}

/** What `GET /<media-id>` answers: a download URL valid for 5 minutes, to fetch with the same token. */
export interface MediaInfo {
  url: string;
  mime_type?: string;
  file_size?: number | string;
}

export class GraphClient {
  private readonly base: string;

  constructor(private readonly opts: GraphClientOptions) {
    this.base = opts.apiUrl.replace(/\/+$/, '');
  }

  /** The bearer header, for a media download (downloadCapped). */
  get authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.opts.accessToken}` };
  }

  async post<T>(what: string, path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return this.call<T>(what, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, signal);
  }

  async get<T>(what: string, path: string, signal?: AbortSignal): Promise<T> {
    return this.call<T>(what, path, { method: 'GET' }, signal);
  }

  /** `POST /<phone-number-id>/media`: the file once, its media id back (kept 30 days by Meta). */
  async upload(phoneNumberId: string, file: { data: Buffer; mimeType: string; name: string }, signal?: AbortSignal): Promise<string> {
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('type', file.mimeType);
    form.set('file', new Blob([new Uint8Array(file.data)], { type: file.mimeType }), file.name);
    const res = await this.call<{ id?: unknown }>('media upload', `/${phoneNumberId}/media`, { method: 'POST', body: form }, signal);
    if (typeof res.id !== 'string') throw new NetworkError('whatsapp media upload: answer without an id', 'whatsapp');
    return res.id;
  }

  private async call<T>(what: string, path: string, init: RequestInit, signal?: AbortSignal): Promise<T> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? WHATSAPP_REQUEST_TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        ...init,
        headers: { ...(init.headers as Record<string, string> | undefined), ...this.authHeaders },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (err instanceof PlatformError) throw err;
      const name = err instanceof Error ? err.name : 'Error';
      const code = err instanceof Error && err.cause instanceof Error && 'code' in err.cause ? ` (${String(err.cause.code)})` : '';
      throw new NetworkError(`whatsapp ${what} failed: ${name}${code}`, 'whatsapp');
    }
    const text = await res.text().catch(() => '');
    let body: unknown = null;
    try {
      body = text === '' ? {} : JSON.parse(text);
    } catch {
      body = null;
    }
    if (!res.ok || graphErrorOf(body)) throw toGraphError(what, res.status, graphErrorOf(body), res.headers.get('retry-after'));
    if (body === null || typeof body !== 'object') throw new NetworkError(`whatsapp ${what}: HTTP ${res.status} with a body that is not JSON`, 'whatsapp');
    return body as T;
  }
}
