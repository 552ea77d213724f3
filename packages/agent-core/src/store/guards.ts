import { StoreNotFoundError } from './errors.js';
import type { Sql } from './sql.js';

/** Fails with a typed error (instead of the database's foreign-key message) when the session does not exist. */
export async function assertSessionExists(sql: Sql, sessionId: string): Promise<void> {
  if (!(await sql.get('SELECT 1 AS found FROM sessions WHERE id = ?', [sessionId]))) {
    throw new StoreNotFoundError('session', sessionId);
  }
}
