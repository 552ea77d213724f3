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
import {
  INITIAL_SCHEMA,
  MESSAGE_ATTACHMENTS,
  SEARCH_INDEX_IN_BATCHES,
  SESSION_ACTIVITY_AND_TOTALS,
  SESSION_PROMPTS_TABLE,
  SKILLS_TABLE,
  TURN_FENCING,
} from './schema.js';
import { ddlFor, type Dialect, type Sql } from './sql.js';
import { MATRIX_SOURCE, WHATSAPP_SOURCE } from './session-sources.js';

/**
 * Who decided what about a tool call that needed approval, and when: `decision` is approved_once, approved_session,
 * denied, timed_out or refused (asked where nobody can answer: the API, a scheduled run); `args` are masked.
 */
const TOOL_APPROVALS_TABLE = `
CREATE TABLE tool_approvals (
  id           TEXT PRIMARY KEY,
  request_id   TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  session_key  TEXT NOT NULL,
  platform     TEXT NOT NULL,
  chat_id      TEXT NOT NULL,
  tool         TEXT NOT NULL,
  args         TEXT NOT NULL,
  asked_by     TEXT NOT NULL,
  decision     TEXT NOT NULL,
  decided_by   TEXT NOT NULL,
  asked_at     INTEGER NOT NULL,
  decided_at   INTEGER NOT NULL
);
CREATE INDEX tool_approvals_by_time ON tool_approvals (decided_at);
CREATE INDEX tool_approvals_by_session ON tool_approvals (session_id, decided_at);
`;

export interface Migration {
  version: number;
  name: string;
  sql: string | Readonly<Record<Dialect, string>>;
  /** SQLite: the step drops and recreates a table others refer to, so it runs with foreign keys off (checked after). */
  rebuildsTables?: boolean;
  /**
   * A step that reads the schema it changes (a table rebuilt from its own stored definition), per database; run
   * after `sql`, in the same transaction.
   */
  apply?: Readonly<Partial<Record<Dialect, (sql: Sql) => Promise<void>>>>;
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
  // One row per decision on a tool call that needed approval (issue 50; the gateway's features/approvals/audit.ts).
  { version: 48, name: 'tool approval decisions', sql: TOOL_APPROVALS_TABLE },
  // Skills the agent wrote (skill_manage), per profile: every worker on every host reads them from here; skill
  // folders on disk stay read-only sources (gateway features/skills).
  { version: 50, name: 'agent-written skills', sql: SKILLS_TABLE },
  // How a session's system prompt was built (its layers, the personality), for /prompt and the admin API.
  { version: 51, name: 'session prompt layers', sql: SESSION_PROMPTS_TABLE },
  // Issue 53 (M1): when the session was last active (ms; its last usage or messages written), its tokens in one
  // number, and the cost providers reported themselves (OpenRouter's usage.cost; NULL when none did), beside the
  // price table's estimate. Sessions from before get their totals and their last message's time.
  { version: 52, name: 'session activity and totals', sql: SESSION_ACTIVITY_AND_TOTALS },
  // WhatsApp (Cloud API) sessions: `source` may be 'whatsapp' (SQLite rebuilds the table to change its CHECK).
  { version: 55, name: 'whatsapp session source', sql: WHATSAPP_SOURCE, rebuildsTables: true },
  // Matrix sessions: `source` may be 'matrix'. SQLite rebuilds `sessions` from its own stored definition (every
  // column, index and trigger it has by then), not from a copy of it written here.
  { version: 56, name: 'matrix session source', ...MATRIX_SOURCE, rebuildsTables: true },
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
  // SQLite ignores `PRAGMA foreign_keys` inside a transaction, so a table rebuild turns them off around it.
  const rebuilds = sql.dialect === 'sqlite' && wanted.some((m) => m.rebuildsTables && !seen.has(m.version));
  if (!rebuilds) return applyPending(sql, wanted);
  await sql.exec('PRAGMA foreign_keys = OFF');
  try {
    return await applyPending(sql, wanted, true);
  } finally {
    await sql.exec('PRAGMA foreign_keys = ON');
  }
}

function applyPending(sql: Sql, wanted: readonly Migration[], checkKeys = false): Promise<number[]> {
  return sql.transaction(async () => {
    await sql.lock(MIGRATION_LOCK);
    await sql.exec(ddlFor(sql.dialect, BOOKKEEPING_SQL));
    // A sibling process may have applied some since we looked; only the lock makes this read final.
    const done = new Set(await appliedVersions(sql));
    const applied: number[] = [];
    for (const m of wanted) {
      if (done.has(m.version)) continue;
      await sql.exec(migrationSql(m, sql.dialect));
      await m.apply?.[sql.dialect]?.(sql);
      await sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, Date.now()]);
      applied.push(m.version);
    }
    if (sql.dialect === 'sqlite' && applied.length > 0) {
      await sql.exec(`PRAGMA user_version = ${Math.max(...done, ...applied)}`);
    }
    // A rebuild must leave every reference whole, or nothing of it is kept.
    if (checkKeys && (await sql.all('PRAGMA foreign_key_check')).length > 0) throw new Error('a table rebuild left broken foreign keys');
    return applied;
  });
}
