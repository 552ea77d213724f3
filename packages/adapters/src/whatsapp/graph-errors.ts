/**
 * Graph API answers → the shared typed errors, so delivery (the one retry owner) decides without string matching.
 * Graph's error body: `{ error: { message, type, code, error_subcode?, error_data?: { details }, fbtrace_id } }`.
 * Messages name the call and Graph's code, never the token or a media URL.
 */
import { AuthError, BadRequestError, FileTooLargeError, NetworkError, NotFoundError, type PlatformError, RateLimitedError } from '../errors.js';

const P = 'whatsapp';

/** Throughput (130429), pair rate (131056: one message to the same user every ~6 s), spam (131048), app (4), WABA (80007). */
const RATE_LIMIT_WAIT_MS: Record<number, number> = { 130429: 2_000, 131056: 6_000, 131048: 60_000, 4: 60_000, 80007: 60_000, 613: 60_000 };
/** Token expired or revoked (190, 0), missing permission (10, 200–299), app blocked (368), account locked (131031). */
const AUTH_CODES = new Set([0, 190, 10, 368, 131031, 131005]);
/** Recipient unreachable or unknown (131026), number not registered (133010), message or media not found (100 w/ subcode 33). */
const NOT_FOUND_CODES = new Set([131026, 133010]);
/** Graph's own transient failures: unknown (1), temporarily unavailable (2), generic (131000), service unavailable (131016), 133004. */
const TRANSIENT_CODES = new Set([1, 2, 131000, 131016, 133004]);
/** The customer-service window is closed: more than 24 hours since the user last wrote (re-engagement). */
const WINDOW_CLOSED = 131047;

/** The user has not written for 24 hours: only a template may be sent. Not retried; the gateway logs it. */
export class WindowClosedError extends BadRequestError {}

export interface GraphErrorBody {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  error_data?: { details?: string };
}

/** The error inside a Graph answer body, if it has one. */
export function graphErrorOf(body: unknown): GraphErrorBody | null {
  if (typeof body !== 'object' || body === null || !('error' in body)) return null;
  const e = (body as { error: unknown }).error;
  return typeof e === 'object' && e !== null ? (e as GraphErrorBody) : null;
}

/** `retryAfter`: the Retry-After header in seconds, when Graph sent one. */
export function toGraphError(what: string, status: number, error: GraphErrorBody | null, retryAfter: string | null): PlatformError {
  const code = typeof error?.code === 'number' ? error.code : undefined;
  const detail = `${what}: HTTP ${status}${code === undefined ? '' : ` code ${code}`}${error?.message ? ` (${error.message.slice(0, 200)})` : ''}`;
  const headerWait = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : undefined;
  if (status === 429 || (code !== undefined && code in RATE_LIMIT_WAIT_MS)) {
    return new RateLimitedError(P, headerWait ?? RATE_LIMIT_WAIT_MS[code ?? 130429] ?? 2_000, { cause: new Error(detail) });
  }
  if (code === WINDOW_CLOSED) return new WindowClosedError(`whatsapp ${detail}`, P);
  if (status === 413) return new FileTooLargeError(`whatsapp ${detail}`, P);
  if (status === 401 || status === 403 || (code !== undefined && (AUTH_CODES.has(code) || (code >= 200 && code < 300)))) {
    return new AuthError(`whatsapp ${detail}`, P);
  }
  if (status === 404 || (code !== undefined && NOT_FOUND_CODES.has(code))) return new NotFoundError(`whatsapp ${detail}`, P);
  if (status >= 500 || (code !== undefined && TRANSIENT_CODES.has(code))) return new NetworkError(`whatsapp ${detail}`, P);
  return new BadRequestError(`whatsapp ${detail}`, P);
}
