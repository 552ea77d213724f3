/**
 * Migration 55: `whatsapp` joins the platforms a session may come from (`sessions.source`'s CHECK).
 *
 * PostgreSQL replaces the constraint in place. SQLite cannot change a CHECK, so the table is rebuilt the way
 * SQLite's documentation prescribes (new table, copy, drop, rename, indexes again); the runner turns foreign keys
 * off around it (`rebuildsTables`), else dropping the old table would cascade into every session's messages.
 * The rebuilt table has every column the migrations before it added (up to 52's last_active, total_tokens,
 * actual_cost_usd): a column left out here would be dropped with its data.
 */

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
