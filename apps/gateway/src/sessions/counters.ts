/**
 * Per-session numbers /usage shows that the sessions table does not keep: API calls (retries and fallbacks
 * included) counted by the worker after each turn, and compressions, read from the session's lineage.
 */
import { registerMigrations, type Session, type SessionStore } from '@herald/agent-core';
import { openSideDb, writeTx, type SideDb } from './side-db.js';

export const COUNTERS_MIGRATION_VERSION = 141;
export const COUNTERS_SCHEMA = `
CREATE TABLE IF NOT EXISTS session_counters (
  session_id  TEXT PRIMARY KEY,
  api_calls   INTEGER NOT NULL DEFAULT 0,
  updated_at  INTEGER NOT NULL
);
`;
registerMigrations({ version: COUNTERS_MIGRATION_VERSION, name: 'session counters', sql: COUNTERS_SCHEMA });

/** A lineage longer than this is a corrupt parent cycle, not a conversation. */
const MAX_LINEAGE_DEPTH = 1_000;

export class SessionCounters {
  // Compiled once: this runs after every turn.
  private readonly addStmt;
  private readonly getStmt;

  private constructor(private readonly db: SideDb) {
    this.addStmt = db.prepare(
      `INSERT INTO session_counters (session_id, api_calls, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET api_calls = api_calls + excluded.api_calls, updated_at = excluded.updated_at`,
    );
    this.getStmt = db.prepare('SELECT api_calls FROM session_counters WHERE session_id = ?');
  }

  static open(dbPath: string): SessionCounters {
    return new SessionCounters(openSideDb(dbPath, COUNTERS_SCHEMA));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  addApiCalls(sessionId: string, calls: number): void {
    if (calls <= 0) return;
    writeTx(this.db, () => this.addStmt.run(sessionId, calls, Date.now()));
  }

  apiCalls(sessionId: string): number {
    const row = this.getStmt.get(sessionId) as { api_calls: number } | undefined;
    return row?.api_calls ?? 0;
  }
}

/** How many times this conversation was compressed: ancestors that ended because of a compression. */
export function compressionsOf(store: SessionStore, session: Session): number {
  let n = 0;
  let parentId = session.parentSessionId;
  for (let depth = 0; parentId !== null && depth < MAX_LINEAGE_DEPTH; depth++) {
    const parent = store.getSession(parentId);
    if (!parent) break;
    if (parent.endReason === 'compression') n++;
    parentId = parent.parentSessionId;
  }
  return n;
}
