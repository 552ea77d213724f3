/**
 * Numbered schema migrations, run when a store opens, on SQLite and PostgreSQL alike.
 *
 * All pending steps run in one transaction that first takes the migration lock (SQLite: the write lock of
 * `BEGIN IMMEDIATE`; PostgreSQL: an advisory lock) and then re-reads what was applied, so several processes
 * starting at once apply each step exactly once and none of them sees half a schema. Applied versions are
 * recorded one per row in `schema_migrations` (a single counter would silently skip a core migration numbered
 * below an already-applied external one); on SQLite `PRAGMA user_version` mirrors the highest.
 *
 * Other modules add their own steps with `registerMigrations()` at import time, before any store opens. Their
 * SQL is portable DDL in SQLite's spelling (see `ddlFor`), or one text per database.
 * Core owns versions 1–99; registered versions start at 100.
 */
import { CONTEXT_WINDOWS_TABLE } from './context-windows.js';
import { INITIAL_SCHEMA, MESSAGE_ATTACHMENTS, SEARCH_INDEX_IN_BATCHES, SESSION_ACTIVITY_AND_TOTALS, TURN_FENCING } from './schema.js';
import { ddlFor, type Dialect, type Sql } from './sql.js';

export interface Migration {
  version: number;
  name: string;
  sql: string | Readonly<Record<Dialect, string>>;
}

/** Versions below this belong to the store itself. */
export const FIRST_EXTERNAL_VERSION = 100;

export const CORE_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', sql: INITIAL_SCHEMA },
  { version: 2, name: 'fenced outbox', sql: TURN_FENCING },
  { version: 3, name: 'message attachments', sql: MESSAGE_ATTACHMENTS },
  // SQLite's search index written in batches instead of by a trigger per message (fts.ts).
  { version: 5, name: 'search index in batches', sql: SEARCH_INDEX_IN_BATCHES },
  // The model calls a session made, counted in the statement that adds the turn's usage (one write less per turn
  // than the gateway's session_counters table, which keeps the counts from before: the gateway adds the two).
  { version: 6, name: 'session api calls', sql: 'ALTER TABLE sessions ADD COLUMN api_calls INTEGER NOT NULL DEFAULT 0' },
  // Encrypted reasoning items (Responses API) replayed with later requests: JSON, never shown to users.
  { version: 15, name: 'message reasoning details', sql: 'ALTER TABLE messages ADD COLUMN reasoning_details TEXT' },
  // Context windows providers named in errors, shared by every worker (compression/windows.ts).
  { version: 16, name: 'learnt context windows', sql: CONTEXT_WINDOWS_TABLE },
  // The agent profile a session belongs to (gateway profiles); NULL: the default profile (sessions from before).
  { version: 25, name: 'session profile', sql: 'ALTER TABLE sessions ADD COLUMN profile TEXT' },
  // The user's display name on the platform, as its first message gave it (issue 47: the console tells sessions
  // apart by who they are with); NULL when the platform sent none, and for sessions from before.
  { version: 47, name: 'session user name', sql: 'ALTER TABLE sessions ADD COLUMN user_name TEXT' },
  // Issue 53 (M1): when the session was last active (ms; its last usage or messages written), its tokens in one
  // number, and the cost providers reported themselves (OpenRouter's usage.cost; NULL when none did), beside the
  // price table's estimate. Sessions from before get their totals and their last message's time.
  { version: 52, name: 'session activity and totals', sql: SESSION_ACTIVITY_AND_TOTALS },
];

const registered: Migration[] = [];

function sameSql(a: Migration['sql'], b: Migration['sql']): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Adds migrations that every store opened afterwards applies. Registering the identical migration again is a
 * no-op (a module imported twice); a different migration under a taken version throws.
 */
export function registerMigrations(...migrations: Migration[]): void {
  for (const m of migrations) {
    if (!Number.isInteger(m.version) || m.version < FIRST_EXTERNAL_VERSION) {
      throw new RangeError(`migration "${m.name}": version must be an integer >= ${FIRST_EXTERNAL_VERSION}`);
    }
    const taken = registered.find((r) => r.version === m.version);
    if (taken) {
      if (taken.name === m.name && sameSql(taken.sql, m.sql)) continue;
      throw new Error(`migration version ${m.version} is already registered as "${taken.name}"`);
    }
    registered.push({ ...m });
  }
}

/** Core and registered migrations, in the order they apply. */
export function allMigrations(): Migration[] {
  return [...CORE_MIGRATIONS, ...registered].sort((a, b) => a.version - b.version);
}

/** The migration's DDL for this database. */
export function migrationSql(m: Migration, dialect: Dialect): string {
  return typeof m.sql === 'string' ? ddlFor(dialect, m.sql) : m.sql[dialect];
}

const BOOKKEEPING_SQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version     INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  applied_at  INTEGER NOT NULL
)`;

const MIGRATION_LOCK = 'herald:schema-migrations';

async function tableExists(sql: Sql, name: string): Promise<boolean> {
  const row =
    sql.dialect === 'sqlite'
      ? await sql.get(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?`, [name])
      : await sql.get(`SELECT 1 AS found WHERE to_regclass(?) IS NOT NULL`, [name]);
  return row !== undefined;
}

/** Versions already applied to this database, ascending. */
export async function appliedVersions(sql: Sql): Promise<number[]> {
  if (!(await tableExists(sql, 'schema_migrations'))) return [];
  const rows = await sql.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => r.version);
}

/** Applies every migration the database has not seen yet; returns the versions this call applied. */
export async function runMigrations(sql: Sql, migrations: readonly Migration[] = allMigrations()): Promise<number[]> {
  const wanted = [...migrations].sort((a, b) => a.version - b.version);
  // The common case (every step applied) needs no write lock.
  const seen = new Set(await appliedVersions(sql));
  if (wanted.every((m) => seen.has(m.version))) return [];
  return sql.transaction(async () => {
    await sql.lock(MIGRATION_LOCK);
    await sql.exec(ddlFor(sql.dialect, BOOKKEEPING_SQL));
    // A sibling process may have applied some since we looked; only the lock makes this read final.
    const done = new Set(await appliedVersions(sql));
    const applied: number[] = [];
    for (const m of wanted) {
      if (done.has(m.version)) continue;
      await sql.exec(migrationSql(m, sql.dialect));
      await sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, Date.now()]);
      applied.push(m.version);
    }
    if (sql.dialect === 'sqlite' && applied.length > 0) {
      await sql.exec(`PRAGMA user_version = ${Math.max(...done, ...applied)}`);
    }
    return applied;
  });
}
