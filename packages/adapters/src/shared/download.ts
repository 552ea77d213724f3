/**
 * One HTTP download with a size cap, shared by every platform's files.ts. The body is read as it streams and
 * given up as soon as it passes the cap, so a lying or missing Content-Length cannot make a worker buffer more
 * than the limit. Errors are the shared typed ones; their messages name the platform and the status, never
 * the URL (a Telegram download URL contains the bot token).
 */
import { AuthError, FileTooLargeError, NetworkError, NotFoundError, PlatformError } from '../errors.js';
import type { FileDownload } from '../types.js';

/** A download that sends no byte for this long fails. */
const DOWNLOAD_IDLE_TIMEOUT_MS = 30_000;

export interface CappedDownload {
  platform: string;
  url: string;
  maxBytes: number;
  /** The size the platform announced: over the cap, nothing is fetched at all. */
  knownSize?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Decides, from the response, that the platform refused the file even though it answered 200 (Slack's login page). */
  refused?: (res: Response) => string | null;
}

export async function downloadCapped(req: CappedDownload): Promise<FileDownload> {
  const { platform, maxBytes } = req;
  if (req.knownSize !== undefined && req.knownSize > maxBytes) throw FileTooLargeError.over(platform, maxBytes, req.knownSize);
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), DOWNLOAD_IDLE_TIMEOUT_MS);
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(), DOWNLOAD_IDLE_TIMEOUT_MS);
  };
  const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
  try {
    let res: Response;
    try {
      res = await fetch(req.url, { headers: req.headers, signal, redirect: 'follow' });
    } catch (err) {
      throw failure(platform, err, idle.signal.aborted);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw statusError(platform, res.status);
    }
    const refusal = req.refused?.(res);
    if (refusal) {
      await res.body?.cancel().catch(() => undefined);
      throw new AuthError(`${platform} refused the file download: ${refusal}`, platform);
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw FileTooLargeError.over(platform, maxBytes, declared);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (res.body) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          touch();
          total += value.byteLength;
          if (total > maxBytes) {
            await reader.cancel().catch(() => undefined);
            throw FileTooLargeError.over(platform, maxBytes);
          }
          chunks.push(value);
        }
      } catch (err) {
        throw failure(platform, err, idle.signal.aborted);
      }
    }
    const type = res.headers.get('content-type')?.split(';')[0]?.trim();
    return { bytes: Buffer.concat(chunks), ...(type ? { mimeType: type } : {}) };
  } finally {
    clearTimeout(timer);
  }
}

function statusError(platform: string, status: number): PlatformError {
  const message = `${platform} file download failed: HTTP ${status}`;
  if (status === 401 || status === 403) return new AuthError(message, platform);
  if (status === 404 || status === 410) return new NotFoundError(message, platform);
  return new NetworkError(message, platform);
}

/** Keeps typed errors; anything else (a reset, an abort) becomes a NetworkError that names no URL. */
function failure(platform: string, err: unknown, timedOut: boolean): PlatformError {
  if (err instanceof PlatformError) return err;
  if (timedOut) return new NetworkError(`${platform} file download stalled for ${DOWNLOAD_IDLE_TIMEOUT_MS} ms`, platform);
  const name = err instanceof Error ? err.name : 'Error';
  const code = err instanceof Error && err.cause instanceof Error && 'code' in err.cause ? String(err.cause.code) : '';
  return new NetworkError(`${platform} file download failed: ${name}${code ? ` (${code})` : ''}`, platform);
}
