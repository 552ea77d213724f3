/**
 * Which platforms a session may come from (`sessions.source`'s CHECK), migration by migration.
 *
 * Migration 55: `whatsapp` joins the platforms a session may come from (`sessions.source`'s CHECK).
 *
 * PostgreSQL replaces the constraint in place. SQLite cannot change a CHECK, so the table is rebuilt the way
 * SQLite's documentation prescribes (new table, copy, drop, rename, indexes again); the runner turns foreign keys
 * off around it (`rebuildsTables`), else dropping the old table would cascade into every session's messages.
 * The rebuilt table has every column the migrations before it added (up to 52's last_active, total_tokens,
 * actual_cost_usd): a column left out here would be dropped with its data.
 */

import type { Sql } from './sql.js';

const SOURCES = "'telegram', 'discord', 'slack', 'whatsapp', 'cli', 'api'";

const SQLITE_REBUILD = `
CREATE TABLE sessions_rebuilt (
  id                  TEXT PRIMARY KEY,
  key                 TEXT NOT NULL,
  source              TEXT NOT NULL CHECK (source IN (${SOURCES})),
  user_id             TEXT,
  chat_id             TEXT,
  model               TEXT,
  system_prompt       TEXT,
  parent_session_id   TEXT REFERENCES sessions(id) ON DELETE SET NULL,
  started_at          INTEGER NOT NULL,
  ended_at            INTEGER,
  end_reason          TEXT,
  message_count       INTEGER NOT NULL DEFAULT 0,
  tool_call_count     INTEGER NOT NULL DEFAULT 0,
  input_tokens        INTEGER NOT NULL DEFAULT 0,
  output_tokens       INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens   INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens  INTEGER NOT NULL DEFAULT 0,
  estimated_cost_usd  REAL NOT NULL DEFAULT 0,
  title               TEXT,
  last_prompt_tokens  INTEGER,
  api_calls           INTEGER NOT NULL DEFAULT 0,
  profile             TEXT,
  user_name           TEXT,
  last_active         INTEGER,
  total_tokens        INTEGER NOT NULL DEFAULT 0,
  actual_cost_usd     REAL
);
INSERT INTO sessions_rebuilt SELECT id, key, source, user_id, chat_id, model, system_prompt, parent_session_id, started_at,
  ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
  estimated_cost_usd, title, last_prompt_tokens, api_calls, profile, user_name, last_active, total_tokens, actual_cost_usd FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_rebuilt RENAME TO sessions;
CREATE INDEX sessions_started ON sessions (started_at DESC, id DESC);
CREATE INDEX sessions_source_started ON sessions (source, started_at DESC);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_title ON sessions (title) WHERE title IS NOT NULL;
CREATE INDEX sessions_parent ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL;
`;

const POSTGRES_REPLACE = `
ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_source_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_source_check CHECK (source IN (${SOURCES}));
`;

export const WHATSAPP_SOURCE = { sqlite: SQLITE_REBUILD, postgres: POSTGRES_REPLACE } as const;

/** Every source from migration 56 on. */
const SOURCES_56 = ['telegram', 'discord', 'slack', 'whatsapp', 'matrix', 'cli', 'api'] as const;

/** Migration 56: `matrix` joins. PostgreSQL replaces the constraint in place; SQLite rebuilds with `rebuildSessions`. */
export const MATRIX_SOURCE = {
  sql: { sqlite: '', postgres: sourcesConstraint(SOURCES_56) },
  apply: { sqlite: (sql: Sql) => rebuildSessions(sql, SOURCES_56) },
} as const;

function quoted(sources: readonly string[]): string {
  return sources.map((s) => `'${s.replace(/'/g, "''")}'`).join(', ');
}

function sourcesConstraint(sources: readonly string[]): string {
  return `
ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_source_check;
ALTER TABLE sessions ADD CONSTRAINT sessions_source_check CHECK (source IN (${quoted(sources)}));
`;
}

/** `source … CHECK (source IN (…))` as SQLite stored it (the column's own constraint). */
const SOURCE_CHECK_RE = /CHECK\s*\(\s*source\s+IN\s*\([^)]*\)\s*\)/i;
const TABLE_NAME_RE = /^\s*CREATE\s+TABLE\s+(?:"sessions"|sessions\b)/i;

/**
 * SQLite: rebuilds `sessions` with `sources` in its CHECK, from the table's own stored definition
 * (`sqlite_master.sql`), so every column any migration added is kept, copied by name, with every index and
 * trigger on it recreated as stored. The SQLite way to change a constraint (new table, copy, drop, rename); the
 * migration runner has foreign keys off around it (`rebuildsTables`) and checks them after.
 */
async function rebuildSessions(sql: Sql, sources: readonly string[]): Promise<void> {
  const table = await sql.get<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'sessions'`);
  if (!table || !SOURCE_CHECK_RE.test(table.sql) || !TABLE_NAME_RE.test(table.sql)) {
    throw new Error('sessions: its stored definition has no source CHECK to replace');
  }
  const definition = table.sql.replace(SOURCE_CHECK_RE, `CHECK (source IN (${quoted(sources)}))`).replace(TABLE_NAME_RE, 'CREATE TABLE sessions_rebuilt');
  const columns = (await sql.all<{ name: string }>('PRAGMA table_info(sessions)')).map((c) => `"${c.name.replace(/"/g, '""')}"`).join(', ');
  const dependents = await sql.all<{ sql: string }>(
    `SELECT sql FROM sqlite_master WHERE tbl_name = 'sessions' AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name`,
  );
  await sql.exec(definition);
  await sql.exec(`INSERT INTO sessions_rebuilt (${columns}) SELECT ${columns} FROM sessions`);
  await sql.exec('DROP TABLE sessions');
  await sql.exec('ALTER TABLE sessions_rebuilt RENAME TO sessions');
  for (const d of dependents) await sql.exec(d.sql);
}
