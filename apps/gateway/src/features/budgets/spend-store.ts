/**
 * Spend per scope and period, in the session store (SQLite or PostgreSQL), so every worker counts into the same
 * rows and a restart keeps them. A scope is `global`, `profile:<name>`, `user:<platform>:<id>` (across profiles) or
 * `profile-user:<profile>:<platform>:<id>`; a period is `day:2026-11-26` or `month:2026-11`.
 *
 * On PostgreSQL a (scope, period) is spread over up to SPEND_SHARDS rows: a turn adds to the row of the server
 * process its statement runs on (`pg_backend_pid() % SPEND_SHARDS`), and reads sum them. Every turn adds to the
 * `global` and `profile` rows inside its own transaction; with one row each, the turns of all workers queued on that
 * row's lock from their upsert to their COMMIT (a quarter of the queue bench's messages/s went there). By server
 * process, not at random: two server processes never wait for each other on a spend row (unless their ids agree
 * modulo 16), which matters since writes commit in groups (postgres-pipes.ts) holding their rows until the group's
 * COMMIT — two groups that each held a row the other wanted next would deadlock. A person's turns run on the few
 * connections a worker has, so a person has a row or two a period, mostly updated in place. SQLite has one writer at
 * a time anyway and keeps one row (shard 0). The 80 % notice's mark lives on shard 0.
 */
import { registerMigrations, type Sql, type SqlValue, type SqlWrite, type WriteMerge } from '@herald/agent-core';

/** SQLite's spend table (`extraKey`: a last key column, the shard). */
const sqliteSpendTable = (name: string, extraKey: string): string => `CREATE TABLE ${name} (
  scope      TEXT NOT NULL,
  period     TEXT NOT NULL,
  tokens     INTEGER NOT NULL DEFAULT 0,
  cost_usd   REAL NOT NULL DEFAULT 0,
  warned_at  INTEGER,
  updated_at INTEGER NOT NULL,${extraKey ? `\n  ${extraKey.padEnd(10)} INTEGER NOT NULL DEFAULT 0,` : ''}
  PRIMARY KEY (scope, period${extraKey ? `, ${extraKey}` : ''})
);`;

const SPEND_MIGRATION_VERSION = 501;
export const SPEND_SHARDS_MIGRATION_VERSION = 502;
registerMigrations(
  {
    version: SPEND_MIGRATION_VERSION,
    name: 'budgets: spend per scope and period',
    sql: {
      sqlite: sqliteSpendTable('IF NOT EXISTS spend', ''),
      postgres: `CREATE TABLE IF NOT EXISTS spend (
  scope      TEXT NOT NULL,
  period     TEXT NOT NULL,
  tokens     BIGINT NOT NULL DEFAULT 0,
  cost_usd   DOUBLE PRECISION NOT NULL DEFAULT 0,
  warned_at  BIGINT,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (scope, period)
);`,
    },
  },
  {
    version: SPEND_SHARDS_MIGRATION_VERSION,
    name: 'budgets: spend rows in shards',
    sql: {
      // SQLite cannot change a primary key in place: the table is built anew and the rows move to shard 0.
      sqlite: `${sqliteSpendTable('spend_sharded', 'shard')}
INSERT INTO spend_sharded (scope, period, tokens, cost_usd, warned_at, updated_at)
  SELECT scope, period, tokens, cost_usd, warned_at, updated_at FROM spend;
DROP TABLE spend;
ALTER TABLE spend_sharded RENAME TO spend;`,
      postgres: `ALTER TABLE spend ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE spend DROP CONSTRAINT spend_pkey;
ALTER TABLE spend ADD PRIMARY KEY (scope, period, shard);`,
    },
  },
);

/** Rows per (scope, period) on PostgreSQL, at most: one a server process (its id modulo this). */
export const SPEND_SHARDS = 16;

export interface SpendRow {
  scope: string;
  period: string;
  tokens: number;
  costUsd: number;
  warned: boolean;
}

interface Row {
  scope: string;
  period: string;
  tokens: number | string | null;
  cost_usd: number | string | null;
  warned_at: number | string | null;
}

const fromRow = (r: Row): SpendRow => ({
  scope: r.scope,
  period: r.period,
  tokens: Number(r.tokens ?? 0),
  costUsd: Number(r.cost_usd ?? 0),
  warned: r.warned_at !== null,
});

/** A (scope, period)'s shards summed, under the single row's column names. */
const SUMMED = 'scope, period, SUM(tokens) AS tokens, SUM(cost_usd) AS cost_usd, MAX(warned_at) AS warned_at';

/** The row a turn adds to: its statement's server process's on PostgreSQL, the one row on SQLite. */
const SHARD_ADDED_TO = { postgres: `pg_backend_pid() % ${SPEND_SHARDS}`, sqlite: '0' } as const;

const ADD_ON_CONFLICT = `ON CONFLICT (scope, period, shard) DO UPDATE SET tokens = spend.tokens + excluded.tokens,
         cost_usd = spend.cost_usd + excluded.cost_usd, updated_at = excluded.updated_at`;
/** Parameters a row of addSql's upsert takes: scope, period, tokens, cost, time. */
const ROW_PARAMS = 5;
/**
 * PostgreSQL: the upserts of several turns' records written together (the agent core's record batches) as one, their
 * rows summed per key first (an upsert touches a row once); the rows in the order a single upsert writes them.
 */
const ADD_MANY_SQL = `INSERT INTO spend (scope, period, shard, tokens, cost_usd, updated_at)
  SELECT scope, period, ${SHARD_ADDED_TO.postgres}, sum(tokens), sum(cost_usd), max(updated_at)
  FROM json_to_recordset(?::json) AS x(scope text, period text, tokens bigint, cost_usd double precision, updated_at bigint)
  GROUP BY scope, period ORDER BY scope COLLATE "C", period COLLATE "C"
  ${ADD_ON_CONFLICT}`;
const SPEND_MERGE: WriteMerge = {
  key: 'spend',
  merge: (writes) => {
    const rows: Array<{ scope: SqlValue; period: SqlValue; tokens: SqlValue; cost_usd: SqlValue; updated_at: SqlValue }> = [];
    for (const { params: p } of writes)
      for (let i = 0; i < p.length; i += ROW_PARAMS) rows.push({ scope: p[i], period: p[i + 1], tokens: p[i + 2], cost_usd: p[i + 3], updated_at: p[i + 4] });
    return { sql: ADD_MANY_SQL, params: [JSON.stringify(rows)] };
  },
};

/** The upsert of `rows` rows, its text built once per row count (a turn counts in the same few every time). */
const addSqlByRows = new Map<string, string>();
function addSql(rows: number, dialect: Sql['dialect']): string {
  const key = `${dialect}:${rows}`;
  let text = addSqlByRows.get(key);
  if (text === undefined) {
    const row = `(?, ?, ${SHARD_ADDED_TO[dialect]}, ?, ?, ?)`;
    text = `INSERT INTO spend (scope, period, shard, tokens, cost_usd, updated_at) VALUES ${Array.from({ length: rows }, () => row).join(', ')}
       ${ADD_ON_CONFLICT}`;
    addSqlByRows.set(key, text);
  }
  return text;
}

type SpendKey = { scope: string; period: string };
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/**
 * The keys in the one order every upsert writes its rows in (by scope, then period, as text: ADD_MANY_SQL's order), so
 * two statements that meet on rows wait for each other rather than deadlock.
 */
const sortedKeys = (keys: ReadonlyArray<SpendKey>): SpendKey[] => [...keys].sort((a, b) => compareText(a.scope, b.scope) || compareText(a.period, b.period));

export class SpendStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Adds one turn's spend to every (scope, period) it counts in, in one statement (a turn counts in several: user,
   * profile and global, by day and by month), on its server process's shard; joins the caller's transaction. The rows go in
   * one order (sortedKeys), so two turns that meet on a row wait for each other rather than deadlock.
   */
  async add(keys: ReadonlyArray<{ scope: string; period: string }>, tokens: number, costUsd: number): Promise<void> {
    const write = this.addWrite(keys, tokens, costUsd);
    if (write) await this.sql.run(write.sql, write.params);
  }

  /** add's statement, for a caller that commits it with other writes (the turn's record); null when it adds nothing. */
  addWrite(keys: ReadonlyArray<{ scope: string; period: string }>, tokens: number, costUsd: number): SqlWrite | null {
    if (keys.length === 0) return null;
    const now = Date.now();
    // One row each: PostgreSQL refuses an upsert that touches a row twice. A turn's keys are a handful: a key is a
    // repeat when an earlier one is the same (no joined strings or Map for every turn).
    const params: SqlValue[] = [];
    let rows = 0;
    const sorted = sortedKeys(keys);
    for (const [i, { scope, period }] of sorted.entries()) {
      if (sorted.findIndex((k) => k.scope === scope && k.period === period) < i) continue;
      params.push(scope, period, tokens, costUsd, now);
      rows++;
    }
    return { sql: addSql(rows, this.sql.dialect), params, ...(this.sql.dialect === 'postgres' && { merge: SPEND_MERGE }) };
  }

  async get(scope: string, period: string): Promise<SpendRow> {
    const row = await this.sql.get<Row>(`SELECT ${SUMMED} FROM spend WHERE scope = ? AND period = ? GROUP BY scope, period`, [scope, period]);
    return row ? fromRow(row) : { scope, period, tokens: 0, costUsd: 0, warned: false };
  }

  /** Marks the 80 % notice given; true for the one caller that marked it (every other worker gets false). */
  async markWarned(scope: string, period: string): Promise<boolean> {
    const now = Date.now();
    const res = await this.sql.run(
      `INSERT INTO spend (scope, period, shard, tokens, cost_usd, warned_at, updated_at) VALUES (?, ?, 0, 0, 0, ?, ?)
       ON CONFLICT (scope, period, shard) DO UPDATE SET warned_at = excluded.warned_at WHERE spend.warned_at IS NULL`,
      [scope, period, now, now],
    );
    return res.changes === 1;
  }

  /** Rows of these periods, scopes starting with `scopePrefix` (all when empty), most spent first. */
  async list(periods: readonly string[], scopePrefix = '', limit = 500): Promise<SpendRow[]> {
    if (periods.length === 0) return [];
    const marks = periods.map(() => '?').join(', ');
    const rows = await this.sql.all<Row>(
      `SELECT ${SUMMED} FROM spend WHERE period IN (${marks}) AND substr(scope, 1, ?) = ?
       GROUP BY scope, period ORDER BY SUM(cost_usd) DESC, SUM(tokens) DESC, scope LIMIT ?`,
      [...periods, scopePrefix.length, scopePrefix, limit],
    );
    return rows.map(fromRow);
  }

  /** Forgets the spend of one scope in these periods (an admin's reset); returns how many of the periods had any. */
  async reset(scope: string, periods: readonly string[]): Promise<number> {
    if (periods.length === 0) return 0;
    const marks = periods.map(() => '?').join(', ');
    const gone = await this.sql.all<{ period: string }>(`DELETE FROM spend WHERE scope = ? AND period IN (${marks}) RETURNING period`, [scope, ...periods]);
    return new Set(gone.map((r) => r.period)).size;
  }
}
