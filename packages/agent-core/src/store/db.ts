/**
 * Opening the SQLite file and running writes safely when several processes share it.
 *
 * Every write runs in `BEGIN IMMEDIATE` so the write lock is taken up front: a deferred transaction that reads
 * first and upgrades later can fail with SQLITE_BUSY halfway through. SQLite's own busy handler is kept very
 * short because it polls on a fixed schedule and starves the unlucky; a jittered application retry spreads
 * contending processes out instead. better-sqlite3 is synchronous, so the retry sleeps with `Atomics.wait`.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StoreBusyError } from './errors.js';

export type SqliteDb = Database.Database;
export type Statement = Database.Statement;

/** SQLite's own wait for the lock; kept tiny so the jittered retry below decides. */
export const BUSY_TIMEOUT_MS = 10;
export const WRITE_RETRY_MIN_MS = 20;
export const WRITE_RETRY_MAX_MS = 150;
/** Attempts in total (the first try included) before a busy database is reported to the caller. */
export const WRITE_MAX_ATTEMPTS = 15;
/** A passive checkpoint every so many writes keeps the WAL file from growing without bound. */
export const CHECKPOINT_EVERY_WRITES = 50;

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread: the store is synchronous, and a busy loop would steal the CPU from the lock holder. */
export function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

export function jitterMs(): number {
  return WRITE_RETRY_MIN_MS + Math.floor(Math.random() * (WRITE_RETRY_MAX_MS - WRITE_RETRY_MIN_MS + 1));
}

/** SQLITE_BUSY, SQLITE_LOCKED and their extended codes (SQLITE_BUSY_RECOVERY, SQLITE_LOCKED_SHAREDCACHE, ...). */
export function isBusyError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Runs `fn`, retrying with jitter while the database is busy; other errors pass through untouched. */
export function withBusyRetry<T>(fn: () => T, onRetry?: () => void): T {
  let lastError: unknown;
  for (let attempt = 1; attempt <= WRITE_MAX_ATTEMPTS; attempt++) {
    try {
      return fn();
    } catch (err) {
      if (!isBusyError(err)) throw err;
      lastError = err;
      if (attempt < WRITE_MAX_ATTEMPTS) {
        onRetry?.();
        sleepSync(jitterMs());
      }
    }
  }
  throw new StoreBusyError(WRITE_MAX_ATTEMPTS, { cause: lastError });
}

export interface WriteStats {
  /** Write transactions committed through this connection. */
  writes: number;
  /** Times a write found the database busy and waited before trying again. */
  busyRetries: number;
}

/** One connection plus the write discipline (immediate transactions, retry, periodic checkpoint). */
export class StoreDb {
  private writesSinceCheckpoint = 0;
  private readonly counters: WriteStats = { writes: 0, busyRetries: 0 };
  private readonly statements = new Map<string, Statement>();

  private constructor(readonly raw: SqliteDb) {}

  /** Opens (creating the parent directory) and applies the pragmas; ':memory:' works too. */
  static open(file: string): StoreDb {
    const inMemory = file === ':memory:' || file === '';
    if (!inMemory) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const raw = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    try {
      // Switching a fresh file to WAL needs a brief exclusive lock, which can collide with a sibling process.
      withBusyRetry(() => raw.pragma('journal_mode = WAL'));
      raw.pragma('synchronous = NORMAL');
      raw.pragma('foreign_keys = ON');
    } catch (err) {
      raw.close();
      throw err;
    }
    return new StoreDb(raw);
  }

  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction, retried as a whole while the database is busy, so `fn` must
   * only touch the database. Called from inside another write it simply joins that transaction.
   */
  write<T>(fn: () => T): T {
    if (this.raw.inTransaction) return fn();
    const tx = this.raw.transaction(fn);
    const result = withBusyRetry(
      () => tx.immediate(),
      () => this.counters.busyRetries++,
    );
    this.counters.writes++;
    if (++this.writesSinceCheckpoint >= CHECKPOINT_EVERY_WRITES) this.checkpoint();
    return result;
  }

  /** A prepared statement, compiled once per connection: it keeps the time spent holding the write lock short. */
  prepare(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.raw.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Reads rarely meet a busy database in WAL mode (recovery, WAL restart), but when they do they wait too. */
  read<T>(fn: () => T): T {
    if (this.raw.inTransaction) return fn();
    return withBusyRetry(fn, () => this.counters.busyRetries++);
  }

  /** Copies WAL pages back into the main file without waiting for readers or writers. */
  checkpoint(): void {
    this.writesSinceCheckpoint = 0;
    if (this.raw.memory) return;
    try {
      this.raw.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      // Another process checkpointing at the same moment is harmless: the next round catches up.
      if (!isBusyError(err)) throw err;
    }
  }

  stats(): WriteStats {
    return { ...this.counters };
  }

  get isOpen(): boolean {
    return this.raw.open;
  }

  close(): void {
    if (!this.raw.open) return;
    this.checkpoint();
    this.raw.close();
  }
}
