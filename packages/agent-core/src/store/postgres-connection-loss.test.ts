/**
 * A PostgreSQL connection lost while a transaction holds it between two statements (its JavaScript running, no
 * query in flight). node-postgres then emits `error` on the client; the pool listens only on idle clients, so a
 * checked-out one without a listener of its own threw it as an uncaught exception — and the gateway exits on those
 * (support/ops/process-failures.ts): one database blip took down every worker that was inside a transaction at that moment
 * (the fault suite's PostgreSQL run, seed 87386, on a loaded machine). The transaction must fail as unavailable
 * instead — to be waited out like any outage — and the store must work again once the database answers.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../../../test/helpers/tcp-proxy.js';
import { StoreUnavailableError } from './errors.js';
import { PostgresSql } from './postgres-sql.js';
import { freshPostgresSchema, TEST_DATABASE_URL, urlWithSchema } from './test-support.js';

describe('PostgreSQL connection lost inside a transaction', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setUp(): Promise<{ sql: PostgresSql; proxy: TcpProxy; admin: pg.Client }> {
    const db = await freshPostgresSchema('herald_loss');
    cleanups.push(() => db.drop());
    const target = new URL(TEST_DATABASE_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const viaProxy = new URL(urlWithSchema(TEST_DATABASE_URL, db.schema));
    viaProxy.port = String(proxy.port);
    const sql = PostgresSql.open(viaProxy.toString());
    cleanups.push(() => sql.close());
    const admin = new pg.Client({ connectionString: urlWithSchema(TEST_DATABASE_URL, db.schema) });
    await admin.connect();
    cleanups.push(() => admin.end());
    await sql.exec('CREATE TABLE t (n integer NOT NULL)');
    return { sql, proxy, admin };
  }

  /** Resolves once the server no longer has the backend (the client's socket is closed or closing). */
  async function backendGone(admin: pg.Client, pid: number): Promise<void> {
    while ((await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount !== 0) {
      await new Promise((r) => setImmediate(r));
    }
  }

  it('ended by the server: the transaction fails as unavailable, nothing escapes it, and the store works again', async () => {
    const { sql, admin } = await setUp();
    const tx = sql.transaction(async () => {
      await sql.run('INSERT INTO t (n) VALUES (?)', [1]);
      const pid = Number((await sql.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))?.pid);
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await backendGone(admin, pid);
      // The client hears of it while no query of its own is running.
      await new Promise((r) => setTimeout(r, 0));
      await sql.run('INSERT INTO t (n) VALUES (?)', [2]);
    });
    await expect(tx).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await sql.all('SELECT n FROM t')).toEqual([]);
    await sql.transaction(() => sql.run('INSERT INTO t (n) VALUES (?)', [3]));
    expect(await sql.all<{ n: number }>('SELECT n FROM t')).toEqual([{ n: 3 }]);
  });

  it('cut on the way (the database gone for a while): the same, once it is back', async () => {
    const { sql, proxy } = await setUp();
    const tx = sql.transaction(async () => {
      await sql.run('INSERT INTO t (n) VALUES (?)', [1]);
      await proxy.cut();
      await new Promise((r) => setTimeout(r, 0));
      await sql.run('INSERT INTO t (n) VALUES (?)', [2]);
    });
    await expect(tx).rejects.toBeInstanceOf(StoreUnavailableError);
    await proxy.restore();
    expect(await sql.all('SELECT n FROM t')).toEqual([]);
    await sql.transaction(() => sql.run('INSERT INTO t (n) VALUES (?)', [3]));
    expect(await sql.all<{ n: number }>('SELECT n FROM t')).toEqual([{ n: 3 }]);
  });
});
