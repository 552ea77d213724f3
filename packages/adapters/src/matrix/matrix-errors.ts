/**
 * Homeserver answers → the shared typed errors, so delivery (the one retry owner) decides without string matching.
 * A Matrix error body is `{ errcode, error }`; a rate limit is 429 `M_LIMIT_EXCEEDED` with `retry_after_ms` (and,
 * from v1.10, a Retry-After header). Messages name the call and the errcode, never the token or a URL.
 */
import { ConnectionError, HTTPError, MatrixError } from 'matrix-js-sdk/lib/http-api/errors.js';
import { AuthError, BadRequestError, FileTooLargeError, NetworkError, NotFoundError, PlatformError, RateLimitedError } from '../errors.js';
import { wireNumber } from '../shared/wire-values.js';

const P = 'matrix';
/** When a rate limit says nothing about how long: wait this long. */
const DEFAULT_RATE_LIMIT_WAIT_MS = 2_000;
const AUTH_CODES = new Set(['M_UNKNOWN_TOKEN', 'M_MISSING_TOKEN', 'M_FORBIDDEN', 'M_USER_DEACTIVATED', 'M_CONSENT_NOT_GIVEN']);
const NOT_FOUND_CODES = new Set(['M_NOT_FOUND', 'M_UNRECOGNIZED']);

export function toMatrixError(what: string, err: unknown, timedOut: boolean): PlatformError {
  if (err instanceof PlatformError) return err;
  if (err instanceof MatrixError) {
    const status = err.httpStatus ?? 0;
    const code = err.errcode ?? 'M_UNKNOWN';
    const detail = `matrix ${what}: HTTP ${status} ${code}${err.error ? ` (${String(err.error).slice(0, 200)})` : ''}`;
    if (code === 'M_LIMIT_EXCEEDED' || status === 429) return new RateLimitedError(P, retryAfterOf(err), { cause: new Error(detail) });
    if (code === 'M_TOO_LARGE' || status === 413) return new FileTooLargeError(detail, P);
    if (status === 401 || AUTH_CODES.has(code)) return new AuthError(detail, P);
    if (status === 404 || NOT_FOUND_CODES.has(code)) return new NotFoundError(detail, P);
    if (status >= 500) return new NetworkError(detail, P);
    return new BadRequestError(detail, P);
  }
  if (err instanceof HTTPError) {
    const status = err.httpStatus ?? 0;
    const detail = `matrix ${what}: HTTP ${status}`;
    if (status === 429) return new RateLimitedError(P, DEFAULT_RATE_LIMIT_WAIT_MS, { cause: new Error(detail) });
    if (status === 401 || status === 403) return new AuthError(detail, P);
    if (status === 404) return new NotFoundError(detail, P);
    if (status === 413) return new FileTooLargeError(detail, P);
    return status >= 400 && status < 500 ? new BadRequestError(detail, P) : new NetworkError(detail, P);
  }
  if (timedOut) return new NetworkError(`matrix ${what}: no answer in time`, P);
  if (err instanceof ConnectionError) {
    const cause = err.cause instanceof Error && err.cause.cause instanceof Error && 'code' in err.cause.cause ? ` (${String(err.cause.cause.code)})` : '';
    return new NetworkError(`matrix ${what} failed: connection${cause}`, P);
  }
  // An answer that is not JSON (a proxy's page), an abort: worth another try, named without the URL.
  const name = err instanceof Error ? err.name : 'Error';
  return new NetworkError(`matrix ${what} failed: ${name}`, P);
}

function retryAfterOf(err: MatrixError): number {
  let ms: number | null = null;
  try {
    ms = err.getRetryAfterMs();
  } catch {
    ms = null;
  }
  const body = wireNumber((err.data as { retry_after_ms?: unknown }).retry_after_ms);
  if (ms === null && Number.isFinite(body) && body >= 0) ms = body;
  return ms !== null && Number.isFinite(ms) && ms >= 0 ? Math.min(ms, 10 * 60_000) : DEFAULT_RATE_LIMIT_WAIT_MS;
}
