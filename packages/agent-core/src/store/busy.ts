/**
 * When the SQLite file is busy (another process holds its write lock): SQLite's own wait is kept tiny, and the
 * callers retry after a jittered pause instead, on a timer, so a busy file never blocks the event loop. PostgreSQL's
 * serialization conflicts are retried on the same schedule (postgres-sql.ts).
 */

/** SQLite's own wait for the lock; kept tiny so the jittered retry decides. */
export const BUSY_TIMEOUT_MS = 10;
const WRITE_RETRY_MIN_MS = 20;
const WRITE_RETRY_MAX_MS = 150;
/** Attempts in total (the first try included) before a busy database is reported to the caller. */
export const WRITE_MAX_ATTEMPTS = 15;

/** The pause before the next try, at random between WRITE_RETRY_MIN_MS and WRITE_RETRY_MAX_MS. */
export function jitterMs(): number {
  return WRITE_RETRY_MIN_MS + Math.floor(Math.random() * (WRITE_RETRY_MAX_MS - WRITE_RETRY_MIN_MS + 1));
}

/** SQLITE_BUSY, SQLITE_LOCKED and their extended codes (SQLITE_BUSY_RECOVERY, SQLITE_LOCKED_SHAREDCACHE, ...). */
export function isBusyError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
