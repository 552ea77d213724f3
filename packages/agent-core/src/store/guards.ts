import type { StoreDb } from './db.js';
import { StoreNotFoundError } from './errors.js';

/** Fails with a typed error (instead of SQLite's foreign-key message) when the session does not exist. */
export function assertSessionExists(db: StoreDb, sessionId: string): void {
  if (!db.read(() => db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(sessionId))) {
    throw new StoreNotFoundError('session', sessionId);
  }
}
