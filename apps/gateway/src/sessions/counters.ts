/**
 * Per-session numbers /usage shows that the sessions table does not keep: API calls (retries and fallbacks
 * included) counted by the worker after each turn, and compressions, read from the session's lineage.
 */
import { registerMigrations, type Session, type SessionStore, type Sql } from '@herald/agent-core';

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
  private readonly sql: Sql;

  constructor(store: SessionStore) {
    this.sql = store.sql;
  }

  async addApiCalls(sessionId: string, calls: number): Promise<void> {
    if (calls <= 0) return;
    await this.sql.run(
      `INSERT INTO session_counters (session_id, api_calls, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET api_calls = session_counters.api_calls + excluded.api_calls, updated_at = excluded.updated_at`,
      [sessionId, calls, Date.now()],
    );
  }

  async apiCalls(sessionId: string): Promise<number> {
    const row = await this.sql.get<{ api_calls: number }>('SELECT api_calls FROM session_counters WHERE session_id = ?', [sessionId]);
    return row?.api_calls ?? 0;
  }
}

/** How many times this conversation was compressed: ancestors that ended because of a compression. */
export async function compressionsOf(store: SessionStore, session: Session): Promise<number> {
  return (await store.ancestry(session.id)).slice(1).filter((s) => s.endReason === 'compression').length;
}
