import { StoreNotFoundError } from './errors.js';
import type { Sql } from './sql.js';

/** Fails with a typed error (instead of the database's foreign-key message) when the session does not exist. */
export async function assertSessionExists(sql: Sql, sessionId: string): Promise<void> {
  if (!(await sql.get('SELECT 1 AS found FROM sessions WHERE id = ?', [sessionId]))) {
    throw new StoreNotFoundError('session', sessionId);
  }
}

/** The database refused a row whose foreign key points nowhere (SQLite and PostgreSQL spell it differently). */
function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}

/**
 * Runs a write that references the session and turns the database's foreign-key refusal into the same typed
 * error as `assertSessionExists`, without its read: the per-message path checks nothing it need not.
 */
export async function referencingSession<T>(sessionId: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isForeignKeyViolation(err)) throw new StoreNotFoundError('session', sessionId);
    throw err;
  }
}
