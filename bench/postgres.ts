/**
 * A throw-away PostgreSQL database for one benchmark run: created empty (Herald migrates it at start-up, as in a
 * real deployment) and dropped afterwards, so a run leaves nothing behind.
 *
 * The server is reached through HERALD_BENCH_DATABASE_URL (a role allowed to CREATE DATABASE), default
 * postgres://postgres@127.0.0.1:5432/test — the test suite's server; only the new database is written to.
 */
import pg from 'pg';

export const BENCH_ADMIN_URL = process.env.HERALD_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  /** HERALD_DATABASE_URL for the run's processes. */
  url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Why the server cannot be used (null when it answers), so `npm run bench` can skip PostgreSQL and run the rest. */
export async function postgresUnavailable(): Promise<string | null> {
  try {
    await withAdmin((c) => c.query('SELECT 1'));
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `herald_bench_${process.pid}_${Date.now().toString(36)}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(BENCH_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // FORCE: a pooled connection a stopped process has not closed yet must not keep the database alive.
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * Bytes the server has written to its write-ahead log so far (the whole server: on an otherwise idle one, what the
 * run wrote). Rows, index entries and commits each leave WAL, so its growth per message is a figure of the server's
 * write work that CPU contention does not move.
 */
export async function walBytes(): Promise<number> {
  const row = await withAdmin((c) => c.query<{ b: string }>(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS b`));
  return Number(row.rows[0].b);
}
