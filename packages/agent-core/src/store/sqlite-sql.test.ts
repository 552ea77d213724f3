import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { WRITE_MAX_ATTEMPTS } from './busy.js';
import { SqliteSql, WAL_AUTOCHECKPOINT_PAGES } from './sqlite-sql.js';
import { StoreBusyError } from './errors.js';
import { WAL_BACKSTOP_PAGES } from './sqlite-checkpointer.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores();
const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

// A second connection in another thread, so it can hold the write lock while this thread blocks in a retry.
const LOCK_HOLDER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file);
db.exec('BEGIN IMMEDIATE');
db.exec('INSERT INTO t (v) VALUES (0)');
parentPort.postMessage('locked');
const release = () => { db.exec('COMMIT'); db.close(); parentPort.postMessage('released'); };
if (workerData.holdMs > 0) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
  release();
} else {
  parentPort.once('message', release);
}
`;

const dbs: SqliteSql[] = [];
const workers: Worker[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close();
  await Promise.all(workers.splice(0).map((w) => w.terminate()));
});

async function openDb(file = path.join(temp.dir, `db-${dbs.length}-${Date.now()}.db`)): Promise<SqliteSql> {
  const db = await SqliteSql.open(file);
  dbs.push(db);
  return db;
}

function holdLock(file: string, holdMs: number): { worker: Worker; locked: Promise<void>; released: Promise<void> } {
  const worker = new Worker(LOCK_HOLDER, { eval: true, workerData: { module: BETTER_SQLITE3, file, holdMs } });
  workers.push(worker);
  const waitFor = (msg: string): Promise<void> =>
    new Promise((resolve, reject) => {
      worker.on('message', (m) => m === msg && resolve());
      worker.on('error', reject);
    });
  return { worker, locked: waitFor('locked'), released: waitFor('released') };
}

const values = async (db: SqliteSql): Promise<number[]> => (await db.all<{ v: number }>('SELECT v FROM t ORDER BY rowid')).map((r) => r.v);

describe('SqliteSql.open', () => {
  it('creates missing parent directories and puts the file in WAL mode with the required pragmas', async () => {
    const file = path.join(temp.dir, 'nested', 'deeper', 'herald.db');
    const db = await openDb(file);
    expect(fs.existsSync(file)).toBe(true);
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.raw.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.raw.pragma('foreign_keys', { simple: true })).toBe(1);
    // WAL is a property of the file: any other connection sees it too.
    const other = new Database(file);
    expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    other.close();
  });

  it('opens an in-memory database', async () => {
    const db = await openDb(':memory:');
    await db.exec('CREATE TABLE t (v)');
    expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 0 });
  });
});

describe('SqliteSql writes', () => {
  it('waits for another connection that holds the write lock, then commits; the event loop runs meanwhile', async () => {
    const file = path.join(temp.dir, 'wait.db');
    const db = await openDb(file);
    await db.exec('CREATE TABLE t (v INTEGER)');
    const holder = holdLock(file, 150);
    await holder.locked;

    // The retry waits on a timer, so timers and I/O of every other turn keep running (no Atomics.wait).
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    await db.transaction(() => db.run('INSERT INTO t (v) VALUES (1)'));
    clearInterval(ticker);

    await holder.released;
    expect(await values(db)).toEqual([0, 1]);
    expect(db.stats().busyRetries).toBeGreaterThan(0);
    expect(ticks).toBeGreaterThan(0);
  });

  it('gives up with a typed StoreBusyError when the lock never frees, and works again once it does', async () => {
    const file = path.join(temp.dir, 'never.db');
    const db = await openDb(file);
    await db.exec('CREATE TABLE t (v INTEGER)');
    const holder = holdLock(file, 0);
    await holder.locked;

    const thrown = await db.run('INSERT INTO t (v) VALUES (1)').catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(StoreBusyError);
    expect((thrown as StoreBusyError).attempts).toBe(WRITE_MAX_ATTEMPTS);
    expect(db.stats().busyRetries).toBe(WRITE_MAX_ATTEMPTS - 1);

    holder.worker.postMessage('release');
    await holder.released;
    await db.run('INSERT INTO t (v) VALUES (2)');
    expect(await values(db)).toEqual([0, 2]);
  });

  it('does not retry ordinary errors and rolls the transaction back', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE t (v INTEGER)');
    let calls = 0;
    await expect(
      db.transaction(async () => {
        calls++;
        await db.run('INSERT INTO t (v) VALUES (1)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(calls).toBe(1);
    expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 0 });
  });

  it('runs concurrent transactions one after the other, each whole, and joins nested ones', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE t (v INTEGER)');
    const txs = [1, 2, 3].map((n) =>
      db.transaction(async () => {
        await db.run('INSERT INTO t (v) VALUES (?)', [n * 10]);
        await new Promise((r) => setImmediate(r)); // yield to the others mid-transaction
        await db.transaction(() => db.run('INSERT INTO t (v) VALUES (?)', [n * 10 + 1]));
      }),
    );
    await Promise.all(txs);
    expect(await values(db)).toEqual([10, 11, 20, 21, 30, 31]);
    // The CREATE is one write; the three transactions, made in one turn of the event loop, commit as one group.
    expect(db.stats().writes).toBe(2);
  });

  it('commits transactions in arrival order, each whole, while reads in between never see one half done', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE t (v INTEGER)');
    const order: number[] = [];
    // Hundreds of transactions, each yielding to the event loop midway, and a reader asking all along.
    const txs = Array.from({ length: 200 }, (_, i) =>
      db.transaction(async () => {
        await db.run('INSERT INTO t (v) VALUES (?)', [i]);
        await new Promise((r) => setImmediate(r));
        await db.run('INSERT INTO t (v) VALUES (?)', [1000 + i]);
        order.push(i);
      }),
    );
    let done = false;
    const seen: number[] = [];
    const reader = (async () => {
      while (!done) {
        seen.push((await db.get<{ n: number }>('SELECT count(*) AS n FROM t'))!.n);
        await new Promise((r) => setImmediate(r));
      }
    })();
    await Promise.all(txs);
    done = true;
    await reader;
    expect(order).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.filter((n) => n % 2 !== 0)).toEqual([]);
    // Each transaction whole: its two rows next to each other.
    expect(await values(db)).toEqual(order.flatMap((i) => [i, 1000 + i]));
  });

  it('a transaction that fails is undone alone: the rest of its group commits', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE t (v INTEGER)');
    const results = await Promise.allSettled([
      db.transaction(() => db.run('INSERT INTO t (v) VALUES (1)')),
      db.transaction(async () => {
        await db.run('INSERT INTO t (v) VALUES (2)');
        throw new Error('changed my mind');
      }),
      db.run('INSERT INTO t (v) VALUES (3)'),
      db.transaction(() => db.run('INSERT INTO t (v) VALUES (4)')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toBe('changed my mind');
    expect(await values(db)).toEqual([1, 3, 4]);
  });

  it("runs a transaction's function in its caller's async context", async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE t (v INTEGER)');
    const request = new AsyncLocalStorage<string>();
    const seen = await Promise.all(
      ['a', 'b'].map((id) =>
        request.run(id, () =>
          db.transaction(async () => {
            await db.run('INSERT INTO t (v) VALUES (1)');
            return request.getStore();
          }),
        ),
      ),
    );
    expect(seen).toEqual(['a', 'b']);
  });

  it('closes after the open transaction even with more calls waiting, and those fail rather than hang', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE t (v INTEGER)');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = db.transaction(async () => {
      await db.run('INSERT INTO t (v) VALUES (1)');
      await held;
    });
    const closing = db.close();
    const later = db
      .transaction(() => db.run('INSERT INTO t (v) VALUES (2)'))
      .then(
        () => 'committed',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    release();
    await first;
    await closing;
    expect(db.isOpen).toBe(false);
    expect(await later).toMatch(/not open/);
  });

  it('commits the writes made outside a transaction in one turn of the event loop together, each caller getting its own result', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE t (v INTEGER)');
    const before = db.stats().writes;
    const inserted = Array.from({ length: 20 }, (_, i) => db.run('INSERT INTO t (v) VALUES (?)', [i]));
    const returned = [100, 101].map((v) => db.get<{ v: number }>('INSERT INTO t (v) VALUES (?) RETURNING v', [v]));
    const updated = db.all<{ v: number }>('UPDATE t SET v = v + 1000 WHERE v = 3 RETURNING v');
    expect(await Promise.all(inserted)).toEqual(Array.from({ length: 20 }, () => ({ changes: 1 })));
    expect(await Promise.all(returned)).toEqual([{ v: 100 }, { v: 101 }]);
    // In the order they were made: the UPDATE saw the row inserted before it.
    expect(await updated).toEqual([{ v: 1003 }]);
    // One write transaction for all 23 statements.
    expect(db.stats().writes - before).toBe(1);
    expect((await values(db)).sort((a, b) => a - b)).toEqual([0, 1, 2, 4, ...Array.from({ length: 15 }, (_, i) => i + 5), 100, 101, 1003]);
    // A compiled statement keeps what it is: the same writes again, every one from the statement cache now, are one
    // group again.
    const again = Array.from({ length: 3 }, (_, i) => db.run('INSERT INTO t (v) VALUES (?)', [200 + i]));
    expect(await Promise.all(again)).toEqual([{ changes: 1 }, { changes: 1 }, { changes: 1 }]);
    expect(db.stats().writes - before).toBe(2);
    expect((await values(db)).slice(-3)).toEqual([200, 201, 202]);
    // However it was first compiled: a write first run inside a transaction is a write outside one too.
    const insertSelect = 'INSERT INTO t (v) SELECT ?';
    await db.transaction(() => db.run(insertSelect, [300]));
    await Promise.all([301, 302].map((v) => db.run(insertSelect, [v])));
    expect(db.stats().writes - before).toBe(4);
    expect((await values(db)).slice(-3)).toEqual([300, 301, 302]);
  });

  it('a statement of a group that fails fails alone: the others commit', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE u (k TEXT PRIMARY KEY)');
    await db.run("INSERT INTO u (k) VALUES ('taken')");
    const results = await Promise.allSettled([
      db.run("INSERT INTO u (k) VALUES ('a')"),
      db.run("INSERT INTO u (k) VALUES ('taken')"),
      db.run("INSERT INTO u (k) VALUES ('b')"),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
    expect(await db.all('SELECT k FROM u ORDER BY k')).toEqual([{ k: 'a' }, { k: 'b' }, { k: 'taken' }]);
  });

  it('a statement that fails (to compile, or to run inside a transaction) rejects its promise, never throws at the call', async () => {
    const db = await openDb();
    await db.exec('CREATE TABLE u (k TEXT PRIMARY KEY)');
    let read: Promise<unknown> | undefined;
    let write: Promise<unknown> | undefined;
    expect(() => (read = db.get('SELEC 1'))).not.toThrow();
    expect(() => (write = db.run('INSERT INTO nowhere (k) VALUES (1)'))).not.toThrow();
    await expect(read).rejects.toThrow(/syntax error/);
    await expect(write).rejects.toThrow(/no such table/);
    await db.transaction(async () => {
      await db.run("INSERT INTO u (k) VALUES ('a')");
      let inside: Promise<unknown> | undefined;
      expect(() => (inside = db.run("INSERT INTO u (k) VALUES ('a')"))).not.toThrow();
      await expect(inside).rejects.toThrow(/UNIQUE/);
    });
    expect(await db.all('SELECT k FROM u')).toEqual([{ k: 'a' }]);
  });

  it('a group waits for the open transaction, stays out of it, and its callers hear only once it is committed', async () => {
    const file = path.join(temp.dir, 'group.db');
    const db = await openDb(file);
    const other = await openDb(file);
    await db.exec('CREATE TABLE g (v INTEGER)');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = db.transaction(async () => {
      await db.run('INSERT INTO g (v) VALUES (1)');
      await held;
      throw new Error('rolled back');
    });
    let committed = false;
    const outside = db.run('INSERT INTO g (v) VALUES (2)').then(() => (committed = true));
    await new Promise((r) => setImmediate(r));
    expect(committed).toBe(false);
    release();
    await expect(tx).rejects.toThrow('rolled back');
    await outside;
    // Another connection sees the write by the time its caller hears of it; the transaction's row is gone.
    expect(await other.all('SELECT v FROM g')).toEqual([{ v: 2 }]);
    await other.close();
  });

  it(`leaves checkpoints to SQLite's page threshold (${WAL_AUTOCHECKPOINT_PAGES} pages): the WAL stays bounded, small writes cost none`, async () => {
    const file = path.join(temp.dir, 'checkpoint.db');
    const db = await openDb(file);
    expect(db.raw.pragma('wal_autocheckpoint', { simple: true })).toBe(WAL_AUTOCHECKPOINT_PAGES);
    await db.exec('CREATE TABLE t (v TEXT)');
    const pageSize = db.raw.pragma('page_size', { simple: true }) as number;
    const sizeBefore = fs.statSync(file).size;
    // A few hundred small writes stay in the WAL: no checkpoint is paid for them.
    for (let i = 0; i < 200; i++) await db.run('INSERT INTO t (v) VALUES (?)', ['x'.repeat(100)]);
    expect(fs.statSync(file).size).toBe(sizeBefore);
    // Past the threshold SQLite copies the pages back, and the WAL restarts from its start instead of growing.
    const row = 'x'.repeat(pageSize * 2);
    for (let i = 0; i < WAL_AUTOCHECKPOINT_PAGES; i++) await db.run('INSERT INTO t (v) VALUES (?)', [row]);
    expect(fs.statSync(file).size).toBeGreaterThan(sizeBefore + (WAL_AUTOCHECKPOINT_PAGES / 2) * pageSize);
    expect(fs.statSync(`${file}-wal`).size).toBeLessThan(WAL_AUTOCHECKPOINT_PAGES * 3 * (pageSize + 24));
  });

  it('with backgroundCheckpoints a thread copies the WAL back (no COMMIT here pays for it); close stops the thread', async () => {
    const file = path.join(temp.dir, 'background.db');
    const db = await SqliteSql.open(file, { backgroundCheckpoints: true });
    dbs.push(db);
    // This connection's own automatic checkpoint is only a backstop now.
    expect(db.raw.pragma('wal_autocheckpoint', { simple: true })).toBe(WAL_BACKSTOP_PAGES);
    await db.exec('CREATE TABLE t (v TEXT)');
    const pageSize = db.raw.pragma('page_size', { simple: true }) as number;
    const sizeBefore = fs.statSync(file).size;
    const row = 'x'.repeat(pageSize * 2);
    const rows = 300; // ≈ 900 pages: well below the backstop, so only the thread can have copied them back
    for (let i = 0; i < rows; i++) await db.run('INSERT INTO t (v) VALUES (?)', [row]);
    await db.backgroundCheckpointCaughtUp();
    expect(fs.statSync(file).size).toBeGreaterThan(sizeBefore + rows * 2 * pageSize);
    expect(await db.get<{ n: number }>('SELECT count(*) AS n FROM t')).toEqual({ n: rows });
    await db.close();
    expect(db.isOpen).toBe(false);
    // Closed for good: the last connection folded the WAL in and removed it.
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const again = new Database(file, { readonly: true });
    expect(again.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: rows });
    again.close();
  });

  it('closes idempotently', async () => {
    const db = await openDb();
    await db.close();
    expect(db.isOpen).toBe(false);
    await expect(db.close()).resolves.toBeUndefined();
  });
});
