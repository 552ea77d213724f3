/**
 * Discord's attachment CDN: files are served at `/attachments/<channel>/<id>/<filename>` with the signed query
 * Discord puts on every attachment URL since 2024 (`ex` = expiry as hex Unix seconds, `is` = issued, `hm` = the
 * signature). No bot token is needed; a URL whose signature is wrong or that has expired answers 404 with
 * "This content is no longer available.", as the real CDN does. A bot gets a fresh URL for an expired one through
 * the REST API's `POST /attachments/refresh-urls` (rest.ts, answered by `refresh`).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Discord's signed URLs last about a day. */
export const CDN_URL_LIFETIME_S = 24 * 3600;
const SIGNING_KEY = randomBytes(16);

interface StoredFile {
  bytes: Buffer;
  contentType: string;
}

export class FakeCdn {
  private readonly files = new Map<string, StoredFile>();
  readonly downloads: { path: string; status: number }[] = [];
  /** Seconds added to the CDN's clock (to let URLs expire without waiting). */
  skewS = 0;

  constructor(private readonly baseUrl: () => string) {}

  /** Stores a file and returns its signed URL. */
  put(channelId: string, filename: string, bytes: Buffer, contentType = 'application/octet-stream'): string {
    const id = randomBytes(8).readBigUInt64BE().toString().slice(0, 18);
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
    this.files.set(path, { bytes, contentType });
    return this.signed(path);
  }

  /**
   * `POST /attachments/refresh-urls` for one URL: a file the CDN holds gets a freshly signed URL (whatever its old
   * query said); any other URL comes back as it was, as Discord answers for a link it cannot refresh.
   */
  refresh(original: string): string {
    let path: string;
    try {
      path = new URL(original).pathname;
    } catch {
      return original;
    }
    return this.files.has(path) ? this.signed(path) : original;
  }

  private signed(path: string): string {
    const issued = this.now();
    const ex = (issued + CDN_URL_LIFETIME_S).toString(16);
    const is = issued.toString(16);
    return `${this.baseUrl()}${path}?ex=${ex}&is=${is}&hm=${sign(path, ex, is)}&`;
  }

  /** Answers CDN requests; false for any other path (left to the REST handler). */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (!url.pathname.startsWith('/attachments/')) return false;
    const file = this.files.get(url.pathname);
    const ex = url.searchParams.get('ex') ?? '';
    const is = url.searchParams.get('is') ?? '';
    const valid = file !== undefined && url.searchParams.get('hm') === sign(url.pathname, ex, is) && Number.parseInt(ex, 16) > this.now();
    if (!valid || req.method !== 'GET') {
      this.downloads.push({ path: url.pathname, status: 404 });
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('This content is no longer available.');
      return true;
    }
    this.downloads.push({ path: url.pathname, status: 200 });
    res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.bytes.length });
    res.end(file.bytes);
    return true;
  }

  private now(): number {
    return Math.floor(Date.now() / 1000) + this.skewS;
  }
}

function sign(path: string, ex: string, is: string): string {
  return createHmac('sha256', SIGNING_KEY).update(`${path}|${ex}|${is}`).digest('hex');
}
