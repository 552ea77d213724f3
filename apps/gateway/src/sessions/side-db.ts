/**
 * A second connection to Herald's SQLite file, for the pairing tables: `herald pairing approve` works on the file
 * without opening a SessionStore. (Tables used only next to a store, like the counters, use `store.database`.)
 *
 * The tables are created by migrations registered with the store (so they are versioned with the rest of the
 * schema) and, because this connection may be the first to open the file, also with `CREATE TABLE IF NOT EXISTS`.
 * Writes here are rare and tiny, so SQLite's own busy timeout is enough to wait out the store's writers.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

/** How long a write waits for the store's writers before SQLITE_BUSY reaches the caller. */
export const SIDE_DB_BUSY_TIMEOUT_MS = 5_000;

export type SideDb = Database.Database;

/** Opens (creating the directory) in WAL mode and applies `schema` (idempotent DDL). ':memory:' works. */
export function openSideDb(file: string, schema: string): SideDb {
  const inMemory = file === ':memory:' || file === '';
  if (!inMemory) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file, { timeout: SIDE_DB_BUSY_TIMEOUT_MS });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.exec(schema);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Runs `fn` in one `BEGIN IMMEDIATE` transaction (the write lock taken up front, as the store does). */
export function writeTx<T>(db: SideDb, fn: () => T): T {
  return db.transaction(fn).immediate();
}
