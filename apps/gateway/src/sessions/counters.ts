/**
 * Per-session numbers /usage shows that the sessions table does not keep: API calls (retries and fallbacks
 * included) counted by the worker after each turn, and compressions, read from the session's lineage.
 */
import { registerMigrations, type Session, type SessionStore, type StoreDb } from '@herald/agent-core';

export const COUNTERS_MIGRATION_VERSION = 141;
export const COUNTERS_SCHEMA = `
CREATE TABLE IF NOT EXISTS session_counters (
  session_id  TEXT PRIMARY KEY,
  api_calls   INTEGER NOT NULL DEFAULT 0,
  updated_at  INTEGER NOT NULL
);
`;
registerMigrations({ version: COUNTERS_MIGRATION_VERSION, name: 'session counters', sql: COUNTERS_SCHEMA });

/** Kept on the store's own connection: the worker's count joins the turn's write transaction. */
export class SessionCounters {
  private readonly db: StoreDb;

  constructor(store: SessionStore) {
    this.db = store.database;
  }

  addApiCalls(sessionId: string, calls: number): void {
    if (calls <= 0) return;
    this.db.write(() =>
      this.db
        .prepare(
          `INSERT INTO session_counters (session_id, api_calls, updated_at) VALUES (?, ?, ?)
           ON CONFLICT (session_id) DO UPDATE SET api_calls = api_calls + excluded.api_calls, updated_at = excluded.updated_at`,
        )
        .run(sessionId, calls, Date.now()),
    );
  }

  apiCalls(sessionId: string): number {
    const row = this.db.read(() => this.db.prepare('SELECT api_calls FROM session_counters WHERE session_id = ?').get(sessionId)) as
      | { api_calls: number }
      | undefined;
    return row?.api_calls ?? 0;
  }
}

/** How many times this conversation was compressed: ancestors that ended because of a compression. */
export function compressionsOf(store: SessionStore, session: Session): number {
  return store.ancestry(session.id).slice(1).filter((s) => s.endReason === 'compression').length;
}
