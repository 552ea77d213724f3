/**
 * Statements outside a transaction on PostgreSQL go on a few pipelined connections (postgres-pipes.ts): each still
 * failing alone, writes that wait committed in groups, a blocked one holding up only its own connection, a lost
 * connection replaced — and a transaction still on a pooled connection of its own.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy } from '../../../../test/helpers/tcp-proxy.js';
import { StoreUnavailableError } from './errors.js';
import { PIPELINED_CONNECTIONS } from './postgres-pipes.js';
import { PostgresSql } from './postgres-sql.js';
import { freshPostgresSchema, TEST_DATABASE_URL, urlWithSchema } from './test-support.js';

describe('PostgreSQL statements on pipelined connections', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setUp(url?: (schemaUrl: string) => Promise<string>): Promise<{ sql: PostgresSql; admin: pg.Client; heard: Error[] }> {
    const db = await freshPostgresSchema('herald_pipes');
    cleanups.push(() => db.drop());
    const schemaUrl = urlWithSchema(TEST_DATABASE_URL, db.schema);
    const heard: Error[] = [];
    const sql = PostgresSql.open(url ? await url(schemaUrl) : schemaUrl, { onIdleError: (err) => heard.push(err) });
    cleanups.push(() => sql.close());
    const admin = new pg.Client({ connectionString: schemaUrl });
    await admin.connect();
    cleanups.push(() => admin.end());
    await sql.exec('CREATE TABLE t (n integer NOT NULL CHECK (n >= 0))');
    return { sql, admin, heard };
  }

  const pidOf = async (sql: PostgresSql): Promise<number> => Number((await sql.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))?.pid);

  it('many at once share the few connections; each is its own transaction and fails alone', async () => {
    const { sql } = await setUp();
    const pids = await Promise.all(Array.from({ length: 40 }, () => pidOf(sql)));
    expect(new Set(pids).size).toBeLessThanOrEqual(PIPELINED_CONNECTIONS);
    const writes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => sql.run('INSERT INTO t (n) VALUES (?)', [i === 7 ? -1 : i])));
    expect(writes.filter((w) => w.status === 'rejected')).toHaveLength(1);
    expect((writes[7] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    expect(await sql.get<{ c: number }>('SELECT count(*)::int AS c FROM t')).toEqual({ c: 19 });
    // A transaction holds a pooled connection of its own, not a pipelined one.
    const inTx = await sql.transaction(() => pidOf(sql));
    expect(pids).not.toContain(inTx);
  });

  it('writes that come while one is in flight commit together, each caller getting its own result', async () => {
    const { sql } = await setUp();
    await Promise.all(Array.from({ length: PIPELINED_CONNECTIONS }, () => pidOf(sql)));
    const rows = await Promise.all(
      Array.from({ length: 20 }, (_, i) => sql.get<{ n: number; tx: string }>('INSERT INTO t (n) VALUES (?) RETURNING n, txid_current()::text AS tx', [i])),
    );
    expect(rows.map((r) => r?.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // The first write on each connection goes alone; the rest wait for it and commit as one group a connection.
    expect(new Set(rows.map((r) => r?.tx)).size).toBe(2 * PIPELINED_CONNECTIONS);
    // A read is no write: it goes at once, and sees every committed row.
    expect(await sql.get<{ c: number }>('SELECT count(*)::int AS c FROM t')).toEqual({ c: 20 });
  });

  it('a write that fails in a group fails alone: the group runs again one write at a time and the others commit', async () => {
    const { sql } = await setUp();
    await Promise.all(Array.from({ length: PIPELINED_CONNECTIONS }, () => pidOf(sql)));
    const writes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => sql.get<{ tx: string }>('INSERT INTO t (n) VALUES (?) RETURNING txid_current()::text AS tx', [i === 9 ? -1 : i])),
    );
    expect((writes[9] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    const committed = writes.filter((w): w is PromiseFulfilledResult<{ tx: string } | undefined> => w.status === 'fulfilled');
    expect(committed).toHaveLength(19);
    // The failed write's group ran again write by write (a transaction each); the other connection's group stayed one.
    const txs = new Set(committed.map((w) => w.value?.tx));
    expect(txs.size).toBeGreaterThan(2 * PIPELINED_CONNECTIONS);
    expect(txs.size).toBeLessThan(19);
    expect(await sql.get<{ c: number }>('SELECT count(*)::int AS c FROM t')).toEqual({ c: 19 });
  });

  it('a statement that waits holds up only its own connection', async () => {
    const { sql, admin } = await setUp();
    await Promise.all(Array.from({ length: PIPELINED_CONNECTIONS }, () => pidOf(sql)));
    await admin.query('SELECT pg_advisory_lock(4242)');
    const blocked = sql.get('SELECT pg_advisory_xact_lock(4242) AS locked');
    let released = false;
    void blocked.finally(() => (released = true));
    // Every other statement goes to a connection with nothing waiting on it.
    for (let i = 0; i < 10; i++) await sql.run('INSERT INTO t (n) VALUES (?)', [i]);
    expect(released).toBe(false);
    await admin.query('SELECT pg_advisory_unlock(4242)');
    await blocked;
    expect(await sql.get<{ c: number }>('SELECT count(*)::int AS c FROM t')).toEqual({ c: 10 });
  });

  it('a connection the server ends is heard (never thrown), and the next statement gets a new one', async () => {
    const { sql, admin, heard } = await setUp();
    const pids = new Set(await Promise.all(Array.from({ length: 10 }, () => pidOf(sql))));
    for (const pid of pids) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    while (heard.length < pids.size) await new Promise((r) => setTimeout(r, 10));
    const after = await pidOf(sql);
    expect(pids).not.toContain(after);
    await sql.run('INSERT INTO t (n) VALUES (?)', [1]);
    expect(await sql.get<{ c: number }>('SELECT count(*)::int AS c FROM t')).toEqual({ c: 1 });
  });

  it('cut on the way: statements fail as unavailable, and work again once the database is back', async () => {
    const target = new URL(TEST_DATABASE_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const { sql } = await setUp(async (schemaUrl) => {
      const viaProxy = new URL(schemaUrl);
      viaProxy.port = String(proxy.port);
      return viaProxy.toString();
    });
    await sql.run('INSERT INTO t (n) VALUES (?)', [1]);
    await proxy.cut();
    await expect(sql.run('INSERT INTO t (n) VALUES (?)', [2])).rejects.toBeInstanceOf(StoreUnavailableError);
    await proxy.restore();
    await sql.run('INSERT INTO t (n) VALUES (?)', [3]);
    expect(await sql.all<{ n: number }>('SELECT n FROM t ORDER BY n')).toEqual([{ n: 1 }, { n: 3 }]);
  });
});
