/**
 * The store's own tables, the same names and columns on SQLite and PostgreSQL so an operator's SQL works on
 * either. The tables are written once in SQLite's spelling (`ddlFor` turns it into PostgreSQL's); full-text
 * search is each database's own machinery: an FTS5 table kept by triggers on SQLite, a GIN index over
 * `to_tsvector('simple', content)` on PostgreSQL (no extra column).
 */
import { ddlFor } from './sql.js';

const TABLES = `
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

const SQLITE_FTS = `
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
`;

/** The text search expression; the index below and the search query must spell it identically. */
export const PG_TSVECTOR = `to_tsvector('simple', coalesce(content, ''))`;

const POSTGRES_FTS = `
CREATE INDEX messages_fts ON messages USING GIN ((${PG_TSVECTOR}));
`;

export const INITIAL_SCHEMA = {
  sqlite: TABLES + SQLITE_FTS,
  postgres: ddlFor('postgres', TABLES) + POSTGRES_FTS,
};

/**
 * The fenced outbox: the fencing token of the worker that owns each turn (writes and sends carry it, and an older
 * token is refused), how often a worker claimed the turn to send (a second claim means an earlier send may have
 * happened without being recorded), and the message a streamed reply is being written into (a re-run edits it
 * instead of posting the reply again).
 */
export const TURN_FENCING = `
ALTER TABLE turns ADD COLUMN fence INTEGER;
ALTER TABLE turns ADD COLUMN send_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN stream_message_id TEXT;
`;

/**
 * The SQLite search index is written in batches, not by a trigger on every insert (issue 18): each message's own
 * FTS5 insert wrote a new index segment in its transaction (≈ 55 µs per message, tokenising included, on the path
 * of every turn), where adding a few hundred new messages at once costs 2–4 µs each. `search_index_progress`
 * records the highest message id indexed; fts.ts indexes what is newer on a timer (the gateway) and always before
 * a search, so a search never misses a message. Rows are only taken out of or changed in the index when they are
 * in it: a message deleted or edited before it was indexed is indexed as it is then, or not at all.
 */
export const SEARCH_INDEX_IN_BATCHES = {
  sqlite: `
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
CREATE TABLE search_index_progress (
  name          TEXT PRIMARY KEY,
  indexed_upto  INTEGER NOT NULL
);
INSERT INTO search_index_progress (name, indexed_upto) VALUES ('messages', (SELECT coalesce(max(id), 0) FROM messages));
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.id <= (SELECT indexed_upto FROM search_index_progress WHERE name = 'messages') BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
WHEN old.id <= (SELECT indexed_upto FROM search_index_progress WHERE name = 'messages') BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;
`,
  // PostgreSQL's index is an expression index the database keeps itself.
  postgres: 'SELECT 1',
};

/**
 * Files users sent (issue 17): a JSON list of references (platform, file id, kind, size, name) per message, never
 * the bytes. What was read from the files is in the message's content.
 */
export const MESSAGE_ATTACHMENTS = `
ALTER TABLE messages ADD COLUMN attachments TEXT;
`;

/** Skills written by the agent (skill_manage): one SKILL.md text per profile and name. */
export const SKILLS_TABLE = `
CREATE TABLE skills (
  profile      TEXT NOT NULL,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL,
  content      TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (profile, name)
);
`;

/** The layers a session's system prompt was built from (names, sizes, sources, warnings) and its personality. */
export const SESSION_PROMPTS_TABLE = `
CREATE TABLE session_prompts (
  session_id   TEXT PRIMARY KEY,
  personality  TEXT,
  layers       TEXT NOT NULL,
  created_at   INTEGER NOT NULL
);
`;

/** Migration 52: sessions.last_active, total_tokens, actual_cost_usd, filled in for the sessions already there. */
export const SESSION_ACTIVITY_AND_TOTALS = `
ALTER TABLE sessions ADD COLUMN last_active INTEGER;
ALTER TABLE sessions ADD COLUMN total_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN actual_cost_usd REAL;
UPDATE sessions SET total_tokens = input_tokens + output_tokens + cache_read_tokens + cache_write_tokens,
  last_active = coalesce((SELECT max(m.created_at) FROM messages m WHERE m.session_id = sessions.id), started_at);
`;
