/**
 * Backing up and restoring a SQLite store file while other processes may have it open.
 *
 * Backup uses SQLite's online backup API (better-sqlite3's `backup()`) from a connection of its own. The copy is
 * made in a single step, which reads the whole database in one read transaction: in WAL mode that never blocks
 * the gateway's writers, and the copy is one consistent moment. (Copying in small steps would restart from the
 * beginning each time another process writes, and a busy gateway could keep it from ever finishing.) The copy is
 * written beside its destination, switched to a self-contained file (no -wal), checked, and only then renamed
 * into place, so a failed backup never leaves a half file under the name asked for.
 *
 * Restore first takes the store's file lock exclusively (locking_mode=EXCLUSIVE + BEGIN EXCLUSIVE): that fails
 * while any other connection, a running gateway above all, has the file open, and while it is held no process
 * can open it. The old file is kept beside it under another name, then the checked copy replaces it in one rename.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { isBusyError } from './busy.js';

/** Pages per backup step: all of them, in one read transaction (see above). */
const ALL_PAGES = 0x7fffffff;
/** How long opening a file may wait for another process's brief lock (a checkpoint, WAL recovery). */
const OPEN_TIMEOUT_MS = 5_000;
const LOCK_WAIT_MS = 250;

export interface SqliteStoreSummary {
  sessions: number;
  messages: number;
  /** Schema versions applied to it (schema_migrations). */
  versions: number[];
  bytes: number;
}

/** The file is not a SQLite database, is damaged, or is not a Herald store. */
export class NotAStoreError extends Error {
  override name = 'NotAStoreError';
}

/** Another process has the store open (a running gateway, a herald command). */
export class StoreInUseError extends Error {
  override name = 'StoreInUseError';
}

/** Counts and schema versions of a Herald store; throws NotAStoreError when it is not one or fails its check. */
export function inspectSqliteStore(file: string): SqliteStoreSummary {
  const db = openExisting(file, true);
  try {
    return summarise(db, file);
  } finally {
    db.close();
  }
}

/** A consistent copy of `source` at `dest` (which must not exist yet), checked; returns what it holds. */
export async function backupSqliteStore(source: string, dest: string): Promise<SqliteStoreSummary> {
  const src = openExisting(source, true);
  const partial = `${dest}.partial-${process.pid}`;
  try {
    requireStore(src, source);
    await src.backup(partial, { progress: () => ALL_PAGES });
    const copy = new Database(partial, { fileMustExist: true });
    try {
      // One self-contained file: a backup moved or copied alone must not need a -wal beside it.
      copy.pragma('journal_mode = DELETE');
      const summary = summarise(copy, partial);
      copy.close();
      fs.renameSync(partial, dest);
      return { ...summary, bytes: fs.statSync(dest).size };
    } finally {
      if (copy.open) copy.close();
    }
  } finally {
    src.close();
    fs.rmSync(partial, { force: true });
  }
}

export interface RestorePlan {
  /** The checked backup. */
  backup: SqliteStoreSummary;
  /** The store it replaces, or null when there is none yet. */
  current: SqliteStoreSummary | null;
  /** Where the replaced store is kept (null when there is none). */
  keptAs: string | null;
  /** Replaces the store; call at most once. */
  commit(): Promise<void>;
  /** Lets go of the store without changing it. */
  cancel(): void;
}

/**
 * Checks `backup`, takes `target` exclusively (StoreInUseError when another process has it open) and prepares the
 * copy; nothing changes until `commit()`, so a caller can ask for confirmation in between (holding the lock).
 */
export async function prepareSqliteRestore(backup: string, target: string): Promise<RestorePlan> {
  const source = openExisting(backup, true);
  let lock: Database.Database | null = null;
  const staged = `${target}.restore-${process.pid}`;
  try {
    const backupSummary = summarise(source, backup);
    let current: SqliteStoreSummary | null = null;
    if (fs.existsSync(target)) {
      lock = lockExclusively(target);
      current = summarise(lock, target);
    } else {
      fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    }
    await source.backup(staged, { progress: () => ALL_PAGES });
    source.close();
    const keptAs = lock
      ? `${target}.before-restore-${new Date()
          .toISOString()
          .replace(/[-:]/g, '')
          .replace(/\.\d+Z$/, 'Z')}`
      : null;
    const held = lock;
    let done = false;
    return {
      backup: backupSummary,
      current,
      keptAs,
      async commit() {
        if (done) throw new Error('restore already committed or cancelled');
        done = true;
        try {
          if (held && keptAs) {
            // Everything of the old store into its main file, and out of WAL mode, so the kept file is complete on
            // its own and no -wal of the old store is left for the new one to replay.
            held.pragma('wal_checkpoint(TRUNCATE)');
            held.pragma('journal_mode = DELETE');
            keepCopy(target, keptAs);
          }
          fs.renameSync(staged, target);
          for (const suffix of ['-wal', '-shm']) fs.rmSync(`${target}${suffix}`, { force: true });
        } finally {
          held?.close();
          fs.rmSync(staged, { force: true });
        }
      },
      cancel() {
        if (done) return;
        done = true;
        held?.close();
        fs.rmSync(staged, { force: true });
      },
    };
  } catch (err) {
    if (source.open) source.close();
    lock?.close();
    fs.rmSync(staged, { force: true });
    throw err;
  }
}

/** A connection that holds the file's lock exclusively until it closes; StoreInUseError if anyone has it open. */
function lockExclusively(file: string): Database.Database {
  // A short wait rides out another process's momentary lock (a checkpoint); an open gateway holds its lock for good.
  const db = openExisting(file, false, LOCK_WAIT_MS);
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return db;
  } catch (err) {
    db.close();
    if (isBusyError(err)) {
      throw new StoreInUseError(`${file} is open in another process (a running gateway, or a herald command): stop it first`);
    }
    throw err;
  }
}

/** A hard link where the filesystem allows it (instant, no extra space), else a copy. */
function keepCopy(file: string, as: string): void {
  try {
    fs.linkSync(file, as);
  } catch {
    fs.copyFileSync(file, as);
  }
}

function openExisting(file: string, readonly: boolean, timeout = OPEN_TIMEOUT_MS): Database.Database {
  if (!fs.existsSync(file)) throw new NotAStoreError(`${file} does not exist`);
  try {
    return new Database(file, { readonly, fileMustExist: true, timeout });
  } catch (err) {
    throw new NotAStoreError(`${file} cannot be opened as SQLite: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function requireStore(db: Database.Database, file: string): void {
  try {
    const found = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (!found) throw new NotAStoreError(`${file} is not a Herald store (it has no schema_migrations table)`);
  } catch (err) {
    if (err instanceof NotAStoreError) throw err;
    throw new NotAStoreError(`${file} is not a SQLite database (${err instanceof Error ? err.message : String(err)})`);
  }
}

function summarise(db: Database.Database, file: string): SqliteStoreSummary {
  requireStore(db, file);
  const integrity = db.pragma('quick_check', { simple: true }) as string;
  if (integrity !== 'ok') throw new NotAStoreError(`${file} failed SQLite's integrity check: ${integrity}`);
  const count = (table: string): number => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  const versions = (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>).map((r) => r.version);
  return { sessions: count('sessions'), messages: count('messages'), versions, bytes: fs.statSync(file).size };
}
