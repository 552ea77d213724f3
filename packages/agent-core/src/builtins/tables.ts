/**
 * The tables the built-in tools keep in the session store's SQLite file: memory notes per user and todo lists per
 * session. They are added through the store's migration hook (importing this module registers them), so every
 * process opening the file gets them, numbered in the range the tools own (1100–1199).
 */
import { registerMigrations } from '../store/migrations.js';

const MEMORY_MIGRATION_VERSION = 1100;
const TODO_MIGRATION_VERSION = 1101;

registerMigrations(
  {
    version: MEMORY_MIGRATION_VERSION,
    name: 'tools: memory entries',
    sql: `
CREATE TABLE tool_memory (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  user_key    TEXT NOT NULL,
  target      TEXT NOT NULL CHECK (target IN ('memory', 'user')),
  content     TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX tool_memory_user ON tool_memory (user_key, target, id);
`,
  },
  {
    version: TODO_MIGRATION_VERSION,
    name: 'tools: todo items',
    sql: `
CREATE TABLE tool_todos (
  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  item_id     INTEGER NOT NULL,
  content     TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'done')),
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (session_id, item_id)
);
`,
  },
);
