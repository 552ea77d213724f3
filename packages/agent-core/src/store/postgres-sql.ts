/**
 * The PostgreSQL side of `Sql`: a pg connection pool, for deployments whose workers run on several machines.
 *
 * Statements are the store's portable SQL with `?` placeholders, numbered here and sent as named prepared
 * statements (parsed and planned once per connection). A transaction holds one pooled connection; calls made
 * inside it (the same async context) run on that connection. A statement on its own runs on one of a few pipelined
 * connections (postgres-pipes.ts). Serialisation failures and deadlocks retry the
 * whole transaction, as SQLITE_BUSY does on the other side.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { StoreBusyError, StoreUnavailableError } from './errors.js';
import { jitterMs, WRITE_MAX_ATTEMPTS } from './busy.js';
import { changesRows, numberPlaceholders, type RunResult, type Sql, type SqlValue, type WriteStats } from './sql.js';
import { PipelinedConnections } from './postgres-pipes.js';

const DEFAULT_POOL_SIZE = 10;
/** Making one new connection: longer, and the server is taken as unreachable (StoreUnavailableError). */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * Waiting for a pooled connection while every one is in use: ordinary under load (5,000 turns at once on a pool of
 * 10), so far longer than a connect. pg-pool bounds both with one option; with the connect's 5 s it failed queued
 * statements as unavailable after 5 s of a busy pool, and their turns ran again later (issue 54). Within the 2
 * minutes a turn waits for the database anyway (docs/guarantees.md).
 */
const POOL_WAIT_MS = 60_000;

// int8 (counts, ids, millisecond times) and numeric (sum of int8) arrive as strings by default; every value the
// store keeps fits a double exactly.
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as unknown as pg.CustomTypesConfig;

/** Serialization failure, deadlock: the transaction is worth running again. */
const RETRY_CODES = new Set(['40001', '40P01']);

export interface PostgresOptions {
  poolSize?: number;
  connectTimeoutMs?: number;
  /** For pg's own errors on connections no statement was waiting on (a server restart): logged, never thrown. */
  onIdleError?: (err: Error) => void;
}

interface TxFrame {
  client: pg.PoolClient;
  active: boolean;
}

interface Prepared {
  text: string;
  /** Absent past MAX_PREPARED: the statement is sent unnamed (parsed each time, nothing kept per connection). */
  name?: string;
  /** It changes rows: outside a transaction it commits in a group (postgres-pipes.ts). */
  write: boolean;
  /** The parameters read as JSON (`?::json`), by index: a NUL is escaped in them (withoutNul). */
  json: ReadonlySet<number>;
}

/**
 * Named statements kept per connection, at most. The store's own SQL is a few dozen texts; only generated SQL
 * (a bulk copy's multi-row inserts) could add more, and those need not stay prepared on every connection.
 */
export const MAX_PREPARED = 256;

/** Takes the transaction-scoped advisory lock on a name's 64-bit hash (one parameter: the name). */
export const ADVISORY_XACT_LOCK = 'pg_advisory_xact_lock(hashtextextended(?, 0))';

export class PostgresSql implements Sql {
  readonly dialect = 'postgres' as const;
  private readonly context = new AsyncLocalStorage<TxFrame>();
  private readonly prepared = new Map<string, Prepared>();
  private readonly counters: WriteStats = { writes: 0, busyRetries: 0 };

  private constructor(
    private readonly pool: pg.Pool,
    private readonly pipes: PipelinedConnections,
  ) {}

  /** How many statements are kept named (bounded by MAX_PREPARED). */
  get preparedCount(): number {
    return this.prepared.size;
  }

  /** A pool on `url` (`postgres://user:pass@host:5432/db`); connections are made on first use. */
  static open(url: string, opts: PostgresOptions = {}): PostgresSql {
    const connectTimeoutMs = opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    // Each new connection bounds its own connect (pg.Client's option); the pool's option is then the wait for one.
    class BoundedClient extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
      }
    }
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? DEFAULT_POOL_SIZE,
      connectionTimeoutMillis: Math.max(POOL_WAIT_MS, connectTimeoutMs),
      types: typeParsers,
      Client: BoundedClient,
    });
    pool.on('error', (err) => opts.onIdleError?.(err));
    const pipes = new PipelinedConnections({ connectionString: url, types: typeParsers, connectionTimeoutMillis: connectTimeoutMs }, opts.onIdleError);
    return new PostgresSql(pool, pipes);
  }

  get inTransaction(): boolean {
    const frame = this.context.getStore();
    return frame?.active === true;
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<RunResult> {
    const result = await this.query(sql, params);
    if (!this.inTransaction && result.command !== 'SELECT') this.counters.writes++;
    return { changes: result.rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    const frame = this.frame();
    await transient(() => (frame ? frame.client.query(sql) : this.pool.query(sql)));
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn();
    for (let attempt = 1; ; attempt++) {
      const client = await transient(() => this.pool.connect());
      client.on('error', heardWhileHeld);
      const frame: TxFrame = { client, active: true };
      let broken: Error | undefined;
      try {
        await transient(() => client.query('BEGIN'));
        const result = await this.context.run(frame, fn);
        await transient(() => client.query('COMMIT'));
        this.counters.writes++;
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackErr: Error) => (broken = rollbackErr));
        const code = (err as { code?: unknown }).code;
        if (typeof code !== 'string' || !RETRY_CODES.has(code)) throw err;
        if (attempt >= WRITE_MAX_ATTEMPTS) throw new StoreBusyError(WRITE_MAX_ATTEMPTS, { cause: err });
        this.counters.busyRetries++;
      } finally {
        frame.active = false;
        client.removeListener('error', heardWhileHeld);
        // A client whose connection was lost is not queryable: the pool drops it instead of reusing it.
        client.release(broken);
      }
      await sleep(jitterMs());
    }
  }

  /** A transaction-scoped advisory lock on the name's 64-bit hash; released at commit or rollback. */
  async lock(name: string): Promise<void> {
    if (!this.inTransaction) throw new Error(`lock(${name}) outside a transaction`);
    await this.query(`SELECT ${ADVISORY_XACT_LOCK}`, [name]);
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1 AS ok', []);
  }

  stats(): WriteStats {
    return { ...this.counters };
  }

  async close(): Promise<void> {
    await this.pipes.close();
    if (this.pool.ended || this.pool.ending) return;
    await this.pool.end();
  }

  private frame(): TxFrame | undefined {
    const frame = this.context.getStore();
    return frame?.active ? frame : undefined;
  }

  private statementFor(sql: string): Prepared {
    let p = this.prepared.get(sql);
    if (!p) {
      const text = numberPlaceholders(sql);
      const unnamed = { text, write: changesRows(sql), json: jsonParams(text) };
      if (this.prepared.size >= MAX_PREPARED) return unnamed;
      p = { ...unnamed, name: `herald_${this.prepared.size + 1}` };
      this.prepared.set(sql, p);
    }
    return p;
  }

  private async query(sql: string, params: readonly SqlValue[]): Promise<pg.QueryResult> {
    const { text, name, write, json } = this.statementFor(sql);
    const frame = this.frame();
    const values = withoutNul(params, json);
    const config = name ? { text, name, values } : { text, values };
    // In a transaction, a deadlock fails the transaction, which runs again (transaction()).
    if (frame) return transient(() => frame.client.query(config));
    // A statement on its own goes on a pipelined connection (postgres-pipes.ts), a write in a group commit. One that
    // deadlocked (several writes as one, turns.ts `recordTurn`) was rolled back whole: run it again.
    for (let attempt = 1; ; attempt++) {
      try {
        return await transient(() => this.pipes.query(config, write));
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (typeof code !== 'string' || !RETRY_CODES.has(code)) throw err;
        if (attempt >= WRITE_MAX_ATTEMPTS) throw new StoreBusyError(WRITE_MAX_ATTEMPTS, { cause: err });
        this.counters.busyRetries++;
      }
      await sleep(jitterMs());
    }
  }
}

/** The indexes of the parameters a numbered statement reads as JSON (`$3::json`, `$3::jsonb`). */
function jsonParams(numbered: string): ReadonlySet<number> {
  return new Set(Array.from(numbered.matchAll(/\$(\d+)::jsonb?\b/g), (m) => Number(m[1]) - 1));
}

/** A JSON text's `\u0000` escapes (not an escaped backslash before "u0000"). */
const JSON_NUL = /(?<=(?:^|[^\\])(?:\\\\)*)\\u0000/g;

/**
 * A text without NUL (U+0000), which PostgreSQL's text cannot hold: a parameter with one fails its statement (invalid
 * byte sequence), and JSON that escapes one fails when read as text. A NUL means nothing in a message or a tool's
 * output (a binary file read as text), so it is kept as U+FFFD, here for every statement (and so for the
 * SQLite → PostgreSQL copy). On SQLite it is kept as it is.
 */
export function withoutNulText(text: string, json = false): string {
  const raw = text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
  return json && raw.includes('\\u0000') ? raw.replace(JSON_NUL, '\\ufffd') : raw;
}

/** The parameters as withoutNulText makes them; the same array when none changes (the usual case). */
function withoutNul(params: readonly SqlValue[], json: ReadonlySet<number>): SqlValue[] {
  let out: SqlValue[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    if (typeof v !== 'string') continue;
    const clean = withoutNulText(v, json.has(i));
    if (clean !== v) (out ??= [...params])[i] = clean;
  }
  return out ?? (params as SqlValue[]);
}

/**
 * Listens on a client while a transaction holds it. A connection lost between two statements is reported on the
 * client itself, and the pool listens on idle clients only: unheard, it was an uncaught exception (the process exits
 * on those). Heard, it is dropped here, and the transaction's next statement fails as unavailable, like any outage.
 */
const heardWhileHeld = (): void => undefined;

/** Node socket errors and PostgreSQL's "connection exception" / "operator intervention" classes. */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)$/.test(code)) return true;
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
  }
  // `timeout expired`: pg.Client's own connect timeout (each connection's bound, open()).
  return /Connection terminated|timeout exceeded when trying to connect|^timeout expired$|Client has encountered a connection error/i.test(err.message);
}

/** Connection failures become StoreUnavailableError (worth retrying later); other errors pass through. */
async function transient<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isConnectionError(err)) throw new StoreUnavailableError(err instanceof Error ? err.message : String(err), { cause: err });
    throw err;
  }
}
