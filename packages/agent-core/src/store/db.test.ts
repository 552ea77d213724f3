import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKPOINT_EVERY_WRITES, StoreDb, WRITE_MAX_ATTEMPTS } from './db.js';
import { StoreBusyError } from './errors.js';
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

const dbs: StoreDb[] = [];
const workers: Worker[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) db.close();
  await Promise.all(workers.splice(0).map((w) => w.terminate()));
});

function openDb(file = temp.file()): StoreDb {
  const db = StoreDb.open(file);
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

describe('StoreDb.open', () => {
  it('creates missing parent directories and puts the file in WAL mode with the required pragmas', () => {
    const file = path.join(temp.dir, 'nested', 'deeper', 'herald.db');
    const db = openDb(file);
    expect(fs.existsSync(file)).toBe(true);
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.raw.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.raw.pragma('foreign_keys', { simple: true })).toBe(1);
    // WAL is a property of the file: any other connection sees it too.
    const other = new Database(file);
    expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    other.close();
  });

  it('opens an in-memory database', () => {
    const db = openDb(':memory:');
    db.write(() => db.raw.exec('CREATE TABLE t (v)'));
    expect(db.raw.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
  });
});

describe('StoreDb.write', () => {
  it('waits for another connection that holds the write lock, then commits', async () => {
    const file = temp.file();
    const db = openDb(file);
    db.write(() => db.raw.exec('CREATE TABLE t (v INTEGER)'));
    const holder = holdLock(file, 150);
    await holder.locked;

    db.write(() => db.raw.prepare('INSERT INTO t (v) VALUES (1)').run());

    await holder.released;
    expect(db.raw.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual([0, 1]);
    expect(db.stats().busyRetries).toBeGreaterThan(0);
  });

  it('gives up with a typed StoreBusyError when the lock never frees, and works again once it does', async () => {
    const file = temp.file();
    const db = openDb(file);
    db.write(() => db.raw.exec('CREATE TABLE t (v INTEGER)'));
    const holder = holdLock(file, 0);
    await holder.locked;

    let thrown: unknown;
    try {
      db.write(() => db.raw.prepare('INSERT INTO t (v) VALUES (1)').run());
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(StoreBusyError);
    expect((thrown as StoreBusyError).attempts).toBe(WRITE_MAX_ATTEMPTS);
    expect(db.stats().busyRetries).toBe(WRITE_MAX_ATTEMPTS - 1);

    holder.worker.postMessage('release');
    await holder.released;
    db.write(() => db.raw.prepare('INSERT INTO t (v) VALUES (2)').run());
    expect(db.raw.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual([0, 2]);
  });

  it('does not retry ordinary errors and rolls the transaction back', () => {
    const db = openDb();
    db.write(() => db.raw.exec('CREATE TABLE t (v INTEGER)'));
    let calls = 0;
    expect(() =>
      db.write(() => {
        calls++;
        db.raw.prepare('INSERT INTO t (v) VALUES (1)').run();
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(calls).toBe(1);
    expect(db.raw.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
  });

  it(`checkpoints the WAL into the main file every ${CHECKPOINT_EVERY_WRITES} writes`, () => {
    const file = temp.file();
    const db = openDb(file);
    // Switch off SQLite's own size-based checkpoint so only the store's policy moves pages.
    db.raw.pragma('wal_autocheckpoint = 0');
    db.write(() => db.raw.exec('CREATE TABLE t (v TEXT)'));
    const insert = db.raw.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 2; i < CHECKPOINT_EVERY_WRITES; i++) db.write(() => insert.run('x'.repeat(2000)));
    const sizeBefore = fs.statSync(file).size;

    db.write(() => insert.run('x'.repeat(2000))); // write number 50

    expect(fs.statSync(file).size).toBeGreaterThan(sizeBefore + 49 * 2000);
  });

  it('closes idempotently', () => {
    const db = openDb();
    db.close();
    expect(db.isOpen).toBe(false);
    expect(() => db.close()).not.toThrow();
  });
});
