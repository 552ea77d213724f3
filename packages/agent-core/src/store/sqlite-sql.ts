/**
 * The SQLite side of `Sql`: one better-sqlite3 connection to a WAL file, shared by every turn of the process.
 *
 * Every write transaction runs in `BEGIN IMMEDIATE` so the write lock is taken up front: a deferred transaction
 * that reads first and upgrades later can fail with SQLITE_BUSY halfway through. SQLite's own busy handler is
 * kept very short because it polls on a fixed schedule and starves the unlucky; a jittered retry spreads
 * contending processes out instead, and it waits with a timer, so a busy file never blocks the event loop.
 *
 * The connection has one transaction at a time. While a transaction is open (its function may await), other
 * calls on this connection wait for it to end instead of slipping into it; calls made from inside it (the same
 * async context) join it.
 *
 * Writes are committed in groups. A transaction, or a write outside any (an INSERT, UPDATE or DELETE on its own),
 * joins the group of its turn of the event loop: at its end the group's members run one after the other in one
 * SQLite transaction — each transaction in a savepoint of its own, so it is still all or nothing by itself — and
 * each caller learns its result once that has committed (one BEGIN and one COMMIT, and one WAL frame per page, for
 * the whole group instead of each member). A member that fails fails alone; the others commit.
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { setBounded } from '../base/bounded-map.js';
import { BUSY_TIMEOUT_MS, isBusyError, jitterMs, WRITE_MAX_ATTEMPTS } from './busy.js';
import { StoreBusyError } from './errors.js';
import { ConnectionTurns, type TxFrame } from './sqlite-connection-turns.js';
import { startCheckpointer, WAL_BACKSTOP_PAGES, type Checkpointer } from './sqlite-checkpointer.js';
import { changesRows, type RunResult, type Sql, type SqlValue, type WriteStats } from './sql.js';

type Statement = Database.Statement;
/** A compiled statement, and whether it changes rows (`changesRows`: such a one commits in a group). */
interface Compiled {
  stmt: Statement;
  write: boolean;
}

export interface SqliteOptions {
  /** WAL checkpoints in a background thread (sqlite-checkpointer.ts); the gateway's store sets it. */
  backgroundCheckpoints?: boolean;
}

/**
 * The WAL is copied back into the main file by SQLite itself once it holds this many pages (a passive checkpoint
 * in the committing connection): that bounds the file by size, at a cost paid once per ~4 MB of writes. (A manual
 * checkpoint every 50 writes used to cost ≈ 5 % of a busy worker's CPU for no better bound.) The gateway's own
 * store checkpoints in a background thread instead (`backgroundCheckpoints`, sqlite-checkpointer.ts).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 1000;
/** Compiled statements kept: the store's own SQL is a few dozen texts; generated SQL must not grow the cache. */
export const MAX_STATEMENTS = 256;

const notOpen = (): TypeError => new TypeError('The database connection is not open');

/** A transaction, or a write outside any, waiting for the group it commits with. */
interface Member {
  /**
   * A transaction's function (run in a frame of its own, in the caller's async context), or a statement: `run`'s
   * change count, or the rows a RETURNING clause gives `get` and `all`.
   */
  run: (frame: TxFrame) => unknown;
  tx: boolean;
  done: (result: unknown) => void;
  fail: (err: unknown) => void;
  /** Groups it was in: a transaction that met a busy file goes into the next one, WRITE_MAX_ATTEMPTS in all. */
  attempts: number;
}

export class SqliteSql implements Sql {
  readonly dialect = 'sqlite' as const;
  private readonly statements = new Map<string, Compiled>();
  private readonly context = new AsyncLocalStorage<TxFrame>();
  /** The transaction that holds the connection, and the calls waiting for it to end. */
  private readonly conn = new ConnectionTurns();
  private readonly counters: WriteStats = { writes: 0, busyRetries: 0 };
  /** Transactions and writes made in this turn of the event loop, committed together (flushGroups). */
  private queued: Member[] = [];
  private flushing: Promise<void> | null = null;
  /** close() was called: new calls fail at once. */
  private closing = false;

  /** The checkpoint thread (sqlite-checkpointer.ts), when the connection was opened with backgroundCheckpoints. */
  private checkpointer: Checkpointer | null = null;

  private constructor(readonly raw: Database.Database) {}

  /**
   * Opens (creating the parent directory) and applies the pragmas; ':memory:' works too. `backgroundCheckpoints`
   * (the gateway's store): WAL checkpoints run in a thread of their own instead of inside a COMMIT on this one.
   */
  static async open(file: string, opts: SqliteOptions = {}): Promise<SqliteSql> {
    const inMemory = file === ':memory:' || file === '';
    if (!inMemory) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const raw = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    const sql = new SqliteSql(raw);
    try {
      // Switching a fresh file to WAL needs a brief exclusive lock, which can collide with a sibling process.
      await sql.retryBusy(() => raw.pragma('journal_mode = WAL'));
      raw.pragma('synchronous = NORMAL');
      raw.pragma('foreign_keys = ON');
      const background = opts.backgroundCheckpoints === true && !raw.memory;
      raw.pragma(`wal_autocheckpoint = ${background ? WAL_BACKSTOP_PAGES : WAL_AUTOCHECKPOINT_PAGES}`);
      if (background) sql.checkpointer = startCheckpointer(raw.name);
    } catch (err) {
      raw.close();
      throw err;
    }
    return sql;
  }

  get inTransaction(): boolean {
    const frame = this.context.getStore();
    return frame?.active === true && this.conn.holder === frame;
  }

  // all, get and run (like statement and outside below) hand on the promise of the call they make instead of being
  // async themselves: a statement outside a transaction was four async calls, each a promise and a frame to allocate.
  all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.statement(sql, (stmt) => stmt.all(...params) as T[]);
  }

  get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return this.statement(sql, (stmt) => stmt.get(...params) as T | undefined);
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    return this.statement(sql, (stmt) => {
      const result = stmt.run(...params);
      if (!stmt.reader && !this.raw.inTransaction) this.noteWrite();
      return { changes: result.changes };
    });
  }

  async exec(sql: string): Promise<void> {
    if (this.inTransaction) {
      this.raw.exec(sql);
      return;
    }
    await this.outside(() => this.raw.exec(sql));
    this.noteWrite();
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn();
    // The caller's async context is taken now: the function runs later, in the group, but in that context (with the
    // frame set inside). Not `AsyncResource.bind`: Node's bound function gets two deprecated accessors made with
    // `Object.setPrototypeOf`, which gives each a map of its own in the old generation pointing at the young
    // function, so every transaction's closure (and what it holds) outlived the next young collection.
    const caller = new AsyncResource('herald.sqlite.transaction');
    return this.enqueue<T>(true, (frame: TxFrame) => caller.runInAsyncScope(() => this.context.run(frame, fn)));
  }

  /** Nothing to do: SQLite has one writer at a time, and every write transaction is immediate. */
  async lock(name: string): Promise<void> {
    if (!this.inTransaction) throw new Error(`lock(${name}) outside a transaction`);
  }

  async ping(): Promise<void> {
    await this.get('SELECT 1 AS ok');
  }

  stats(): WriteStats {
    return { ...this.counters };
  }

  get isOpen(): boolean {
    return this.raw.open;
  }

  async close(): Promise<void> {
    this.closing = true;
    // After the open transaction and the writes queued for a group commit (the group may take the connection in turn).
    for (let waited = false; this.conn.holder || this.flushing; waited = true) {
      if (this.conn.holder) await this.conn.wait(false, waited);
      else await this.flushing;
    }
    if (!this.raw.open) return;
    const checkpointer = this.checkpointer;
    this.checkpointer = null;
    await checkpointer?.stop();
    this.checkpoint();
    this.raw.close();
  }

  /** Copies WAL pages back into the main file without waiting for readers or writers. */
  checkpoint(): void {
    if (this.raw.memory || !this.raw.open) return;
    try {
      this.raw.pragma('wal_checkpoint(PASSIVE)');
    } catch (err) {
      // Another process checkpointing at the same moment is harmless: the next round catches up.
      if (!isBusyError(err)) throw err;
    }
  }

  /** Resolves once the checkpoint thread has copied the WAL back completely (tests); at once without the thread. */
  async backgroundCheckpointCaughtUp(): Promise<void> {
    await this.checkpointer?.caughtUp();
  }

  /** How many compiled statements are kept (bounded by MAX_STATEMENTS). */
  get statementCount(): number {
    return this.statements.size;
  }

  /**
   * A prepared statement, compiled once per connection: it keeps the time spent holding the write lock short.
   * The cache holds MAX_STATEMENTS, the oldest compiled going first (generated SQL, like a bulk copy's inserts,
   * varies; a hot statement evicted by such a flood is compiled again once). A hit costs one lookup, nothing more.
   */
  private prepare(sql: string): Statement {
    return (this.statements.get(sql) ?? this.compile(sql, changesRows(sql))).stmt;
  }

  /** Compiles `sql` into the cache with whether it changes rows, so neither is worked out again while it stays. */
  private compile(sql: string, write: boolean): Compiled {
    return setBounded(this.statements, sql, { stmt: this.raw.prepare(sql), write }, MAX_STATEMENTS);
  }

  /** Not async (see `all`): what it throws is returned as a rejection, as an async function's would be. */
  private statement<T>(sql: string, fn: (stmt: Statement) => T): Promise<T> {
    const cached = this.statements.get(sql);
    try {
      // Inside a transaction a busy error goes up to its group (flushGroups), which runs the transaction again.
      if (this.inTransaction) return Promise.resolve(fn(cached?.stmt ?? this.prepare(sql)));
      if (cached ? cached.write : changesRows(sql)) {
        if (!this.raw.open) throw notOpen();
        const stmt = cached?.stmt ?? this.compile(sql, true).stmt;
        return this.enqueue<T>(false, () => fn(stmt));
      }
    } catch (err) {
      return Promise.reject(err);
    }
    // A read not compiled yet is compiled once it has the connection.
    return this.outside(() => fn(cached?.stmt ?? this.prepare(sql)));
  }

  private enqueue<T>(tx: boolean, run: (frame: TxFrame) => unknown): Promise<T> {
    if (this.closing || !this.raw.open) return Promise.reject(notOpen());
    return new Promise<T>((done, fail) => {
      this.queued.push({ run, tx, done: done as (result: unknown) => void, fail, attempts: 1 });
      this.scheduleFlush();
    });
  }

  /** One group at a time, at the end of this turn of the event loop; members queued as one ends start the next. */
  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = new Promise<void>((r) => setImmediate(r))
      .then(() => this.flushGroups())
      .finally(() => {
        this.flushing = null;
        if (this.queued.length > 0) this.scheduleFlush();
      });
  }

  /**
   * Commits the queued members group by group, each group taking the connection like a transaction would (after the
   * open one, in turn with the waiting calls); members queued meanwhile form the next group. A busy file (another
   * process writing) sends the whole group back to wait and try again. A member's own error goes to its caller only
   * (SQLite undoes just that statement, or that transaction's savepoint); an error that ends the whole transaction,
   * or a COMMIT that fails, goes to every caller of the group.
   */
  private async flushGroups(): Promise<void> {
    for (let attempt = 1; this.queued.length > 0; ) {
      let busy = false;
      for (let waited = false; this.conn.holder; waited = true) await this.conn.wait(true, waited);
      const frame: TxFrame = { active: true };
      this.conn.holder = frame;
      const group = this.queued;
      this.queued = [];
      let begun = false;
      try {
        if (!this.raw.open) throw notOpen();
        this.prepare('BEGIN IMMEDIATE').run();
        begun = true;
        const committed: Array<() => void> = [];
        for (const m of group) {
          const outcome = await this.runMember(m, frame);
          if (!this.raw.inTransaction) throw 'err' in outcome ? outcome.err : new Error('the write group was rolled back');
          if (!('err' in outcome)) committed.push(() => m.done(outcome.result));
          else if (m.tx && isBusyError(outcome.err) && m.attempts < WRITE_MAX_ATTEMPTS) this.again(m);
          else m.fail(m.tx && isBusyError(outcome.err) ? new StoreBusyError(WRITE_MAX_ATTEMPTS, { cause: outcome.err }) : outcome.err);
        }
        this.prepare('COMMIT').run();
        this.noteWrite();
        for (const tell of committed) tell();
      } catch (err) {
        try {
          if (this.raw.open && this.raw.inTransaction) this.raw.exec('ROLLBACK');
        } catch {
          // The connection itself failed: every member hears the first error below.
        }
        busy = !begun && isBusyError(err) && attempt < WRITE_MAX_ATTEMPTS;
        if (busy) {
          this.queued = group.concat(this.queued);
          this.counters.busyRetries++;
        } else {
          const reason = !begun && isBusyError(err) ? new StoreBusyError(WRITE_MAX_ATTEMPTS, { cause: err }) : err;
          for (const m of group) m.fail(reason);
        }
      } finally {
        frame.active = false;
        this.conn.release();
      }
      // Another process has the file: wait a jittered moment. A group that began starts the count afresh.
      if (busy) {
        attempt++;
        await sleep(jitterMs());
      } else attempt = 1;
    }
  }

  /** A statement, or a transaction's function in a savepoint and a frame of its own (its calls join it). */
  private async runMember(m: Member, group: TxFrame): Promise<{ result: unknown } | { err: unknown }> {
    if (!m.tx) {
      try {
        return { result: m.run(group) };
      } catch (err) {
        return { err };
      }
    }
    const own: TxFrame = { active: true };
    this.conn.holder = own;
    this.prepare('SAVEPOINT member').run();
    try {
      const result = await m.run(own);
      this.prepare('RELEASE member').run();
      return { result };
    } catch (err) {
      if (this.raw.open && this.raw.inTransaction) {
        this.prepare('ROLLBACK TO member').run();
        this.prepare('RELEASE member').run();
      }
      return { err };
    } finally {
      own.active = false;
      this.conn.holder = group;
    }
  }

  /** A transaction that met a busy file: into the next group. */
  private again(m: Member): void {
    m.attempts++;
    this.counters.busyRetries++;
    this.queued.push(m);
  }

  /** A statement outside any transaction: waits for a running one to end, retries while another process writes. */
  private outside<T>(fn: () => T): Promise<T> {
    return this.retryBusy(fn, true);
  }

  private async retryBusy<T>(fn: () => T, waitForHolder = false): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (waitForHolder) for (let waited = false; this.conn.holder; waited = true) await this.conn.wait(false, waited);
      try {
        return fn();
      } catch (err) {
        if (!isBusyError(err)) throw err;
        if (attempt >= WRITE_MAX_ATTEMPTS) throw new StoreBusyError(WRITE_MAX_ATTEMPTS, { cause: err });
        this.counters.busyRetries++;
      }
      await sleep(jitterMs());
    }
  }

  private noteWrite(): void {
    this.counters.writes++;
  }
}
