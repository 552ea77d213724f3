/**
 * The one door to the homeserver: matrix-js-sdk's HTTP API (its fetch wrapper, error parsing and bearer auth), not
 * its sync engine, which keeps every room's state in memory for a bot that only needs the new events.
 *
 * Every call gets its own AbortController and deadline timer, cleared in `finally`, chained to the caller's signal
 * with a listener removed in `finally` too: the SDK's own `localTimeoutMs` arms a timer it never clears (a leak per
 * request at /sync rates), so it is never used. Each call is tried once: delivery owns retries (out/delivery.ts).
 */
import { ClientPrefix, MatrixHttpApi, MediaPrefix, Method, type IHttpOpts, type IRequestOpts } from 'matrix-js-sdk/lib/http-api/index.js';
import { TypedEventEmitter } from 'matrix-js-sdk/lib/models/typed-event-emitter.js';
import { MATRIX_REQUEST_TIMEOUT_MS, type MatrixConnection } from './config.js';
import { toMatrixError } from './matrix-errors.js';

export { Method };

export interface CallOptions {
  query?: Record<string, string>;
  body?: Record<string, unknown> | Buffer;
  /** Deadline for this call (default MATRIX_REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** `media`: `/_matrix/media/v3` (uploads); default the client-server API `/_matrix/client/v3`. */
  prefix?: 'client' | 'media' | 'client-v1';
  contentType?: string;
}

const PREFIXES = { client: ClientPrefix.V3, 'client-v1': ClientPrefix.V1, media: MediaPrefix.V3 } as const;

/** Path segments are ids from outside (room ids, event ids): always encoded. */
export const seg = (s: string): string => encodeURIComponent(s);

export class MatrixClient {
  private readonly api: MatrixHttpApi<IHttpOpts & { onlyData: true }>;
  readonly userId: string;
  readonly homeserverUrl: string;
  private readonly token: string;

  constructor(conn: MatrixConnection) {
    this.userId = conn.userId;
    this.token = conn.accessToken;
    this.homeserverUrl = conn.homeserverUrl.replace(/\/+$/, '');
    this.api = new MatrixHttpApi(new TypedEventEmitter(), {
      baseUrl: this.homeserverUrl,
      prefix: ClientPrefix.V3,
      accessToken: conn.accessToken,
      useAuthorizationHeader: true,
      onlyData: true,
    });
  }

  /** What a media download needs: the bearer header (the token never goes into a URL). */
  authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.token}` };
  }

  async call<T>(what: string, method: Method, path: string, opts: CallOptions = {}): Promise<T> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), opts.timeoutMs ?? MATRIX_REQUEST_TIMEOUT_MS);
    const outer = opts.signal;
    const onAbort = (): void => deadline.abort();
    if (outer?.aborted) deadline.abort();
    else outer?.addEventListener('abort', onAbort, { once: true });
    try {
      const body = Buffer.isBuffer(opts.body) ? new Uint8Array(opts.body) : opts.body;
      return await this.api.authedRequest<T>(method, path, opts.query, body, {
        abortSignal: deadline.signal,
        prefix: PREFIXES[opts.prefix ?? 'client'],
        inhibitLogoutEmit: true,
        ...(opts.contentType && { headers: { 'Content-Type': opts.contentType } }),
      } as IRequestOpts);
    } catch (err) {
      throw toMatrixError(what, err, deadline.signal.aborted && !outer?.aborted);
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    }
  }

  /** The full URL of a path under a prefix (media downloads, which stream through downloadCapped). */
  url(prefix: 'client-v1', path: string): string {
    return `${this.homeserverUrl}${PREFIXES[prefix]}${path}`;
  }
}
