/**
 * Per-session numbers /usage shows: API calls (retries and fallbacks included) and compressions, read from the
 * session's lineage. A turn counts its calls in the sessions row's `api_calls`, with its usage (the store's
 * addUsage); this table holds the counts written before that column existed, and those of a worker of an older
 * version still running beside a newer one while hosts are upgraded one by one — the count is the sum of the two.
 */
import { registerMigrations, type Session, type SessionStore, type Sql } from '@herald/agent-core';

const COUNTERS_MIGRATION_VERSION = 141;
const COUNTERS_SCHEMA = `
CREATE TABLE IF NOT EXISTS session_counters (
  session_id  TEXT PRIMARY KEY,
  api_calls   INTEGER NOT NULL DEFAULT 0,
  updated_at  INTEGER NOT NULL
);
`;
registerMigrations({ version: COUNTERS_MIGRATION_VERSION, name: 'session counters', sql: COUNTERS_SCHEMA });

/** Reads on the store's own connection (the counts are written with the usage: the store's addUsage). */
export class SessionCounters {
  private readonly sql: Sql;

  constructor(store: SessionStore) {
    this.sql = store.sql;
  }

  async apiCalls(sessionId: string): Promise<number> {
    const row = await this.sql.get<{ api_calls: number }>(
      'SELECT s.api_calls + coalesce((SELECT c.api_calls FROM session_counters c WHERE c.session_id = s.id), 0) AS api_calls FROM sessions s WHERE s.id = ?',
      [sessionId],
    );
    return Number(row?.api_calls ?? 0);
  }
}

/** How many times this conversation was compressed: ancestors that ended because of a compression. */
export async function compressionsOf(store: SessionStore, session: Session): Promise<number> {
  return (await store.ancestry(session.id)).slice(1).filter((s) => s.endReason === 'compression').length;
}
