/**
 * Waiting for a pooled connection is not an outage: with every connection busy (5,000 turns on a pool of 10), a
 * statement waits its turn instead of failing as unavailable once the connect timeout has passed (it did, and its
 * turn ran again later: issue 54). Making a new connection, pooled or pipelined, still gives up after the connect
 * timeout.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from './errors.js';
import { PostgresSql } from './postgres-sql.js';
import { freshPostgresSchema } from './test-support.js';

describe('the PostgreSQL pool', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a statement waits for a busy pool longer than a connect may take, and then runs', async () => {
    const db = await freshPostgresSchema('herald_pool');
    cleanups.push(() => db.drop());
    const sql = PostgresSql.open(db.url, { poolSize: 1, connectTimeoutMs: 100 });
    cleanups.push(() => sql.close());
    // Transactions hold pooled connections (a statement on its own goes on a pipelined one: postgres-pipes.ts).
    await sql.transaction(() => sql.ping()); // the one connection exists
    // The only connection is held for 1 s (a server-side sleep inside a transaction): ten connect timeouts.
    const held = sql.transaction(() => sql.get('SELECT pg_sleep(1) AS slept'));
    const waited = sql.transaction(() => sql.get<{ ok: number }>('SELECT 1 AS ok'));
    await held;
    expect(await waited).toEqual({ ok: 1 });
  });

  it('a new connection to a server that never answers still fails as unavailable after the connect timeout', async () => {
    const silent = net.createServer(() => undefined); // accepts, never speaks
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const sockets = new Set<net.Socket>();
    silent.on('connection', (s) => sockets.add(s));
    cleanups.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const { port } = silent.address() as net.AddressInfo;
    const sql = PostgresSql.open(`postgres://postgres@127.0.0.1:${port}/test`, { poolSize: 1, connectTimeoutMs: 200 });
    cleanups.push(() => sql.close());
    // A pooled connection (a transaction's) and a pipelined one (a statement on its own) alike.
    await expect(sql.transaction(() => sql.ping())).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(sql.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
