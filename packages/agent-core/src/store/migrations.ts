/**
 * Numbered schema migrations, run when a store opens.
 *
 * Each migration runs in its own `BEGIN IMMEDIATE` transaction and re-checks, under the write lock, whether it
 * was applied, so several processes opening the same file at once apply each step exactly once. Applied
 * versions are recorded one per row in `schema_migrations` (a single counter would silently skip a core
 * migration numbered below an already-applied external one); `PRAGMA user_version` mirrors the highest.
 *
 * Other modules add their own steps with `registerMigrations()` at import time, before any store opens.
 * Core owns versions 1–99; registered versions start at 100.
 */
import type { StoreDb } from './db.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Versions below this belong to the store itself. */
export const FIRST_EXTERNAL_VERSION = 100;

const INITIAL_SCHEMA = `
CREATE TABLE sessions (
  id                  TEXT PRIMARY KEY,
  key                 TEXT NOT NULL,
  source              TEXT NOT NULL CHECK (source IN ('telegram', 'discord', 'slack', 'cli', 'api')),
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
  last_prompt_tokens  INTEGER
);
CREATE INDEX sessions_started ON sessions (started_at DESC, id DESC);
CREATE INDEX sessions_source_started ON sessions (source, started_at DESC);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_title ON sessions (title) WHERE title IS NOT NULL;
CREATE INDEX sessions_parent ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL;

CREATE TABLE messages (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id           TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  role                 TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content              TEXT,
  tool_calls           TEXT,
  tool_call_id         TEXT,
  tool_name            TEXT,
  finish_reason        TEXT,
  reasoning            TEXT,
  platform_message_id  TEXT,
  turn_id              TEXT,
  seq                  INTEGER,
  created_at           INTEGER NOT NULL
);
CREATE INDEX messages_session ON messages (session_id, id);
-- NULL turn ids are distinct in a UNIQUE index, so only messages written for a turn are deduplicated.
CREATE UNIQUE INDEX messages_turn_seq ON messages (session_id, turn_id, seq);

CREATE VIRTUAL TABLE messages_fts USING fts5(content, content = 'messages', content_rowid = 'id');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;

CREATE TABLE session_keys (
  key         TEXT PRIMARY KEY,
  session_id  TEXT NOT NULL REFERENCES sessions(id),
  updated_at  INTEGER NOT NULL
);

CREATE TABLE turns (
  id             TEXT PRIMARY KEY,
  session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  status         TEXT NOT NULL CHECK (status IN ('running', 'replied', 'delivered', 'interrupted', 'failed')),
  reply          TEXT,
  delivered_ids  TEXT NOT NULL DEFAULT '[]',
  error          TEXT,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
);
CREATE INDEX turns_session ON turns (session_id);

CREATE TABLE known_threads (
  platform    TEXT NOT NULL,
  thread_id   TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (platform, thread_id)
);
`;

export const CORE_MIGRATIONS: readonly Migration[] = [{ version: 1, name: 'initial schema', sql: INITIAL_SCHEMA }];

const registered: Migration[] = [];

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
      if (taken.name === m.name && taken.sql === m.sql) continue;
      throw new Error(`migration version ${m.version} is already registered as "${taken.name}"`);
    }
    registered.push({ ...m });
  }
}

/** Core and registered migrations, in the order they apply. */
export function allMigrations(): Migration[] {
  return [...CORE_MIGRATIONS, ...registered].sort((a, b) => a.version - b.version);
}

const BOOKKEEPING_SQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version     INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  applied_at  INTEGER NOT NULL
)`;

/** Versions already applied to this database, ascending. */
export function appliedVersions(db: StoreDb): number[] {
  return db.read(() => {
    const exists = db.raw
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`)
      .get();
    if (!exists) return [];
    return db.raw.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[];
  });
}

/** Applies every migration the database has not seen yet; returns the versions this call applied. */
export function runMigrations(db: StoreDb, migrations: readonly Migration[] = allMigrations()): number[] {
  const done = new Set(appliedVersions(db));
  const pending = [...migrations].filter((m) => !done.has(m.version)).sort((a, b) => a.version - b.version);
  if (pending.length === 0) return [];
  db.write(() => db.raw.exec(BOOKKEEPING_SQL));
  const isApplied = db.raw.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = db.raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: number[] = [];
  for (const m of pending) {
    const ran = db.write(() => {
      // A sibling process may have applied it since we looked; only the write lock makes the check final.
      if (isApplied.get(m.version)) return false;
      db.raw.exec(m.sql);
      record.run(m.version, m.name, Date.now());
      const highest = db.raw.prepare('SELECT max(version) FROM schema_migrations').pluck().get() as number;
      db.raw.pragma(`user_version = ${highest}`);
      return true;
    });
    if (ran) applied.push(m.version);
  }
  return applied;
}
