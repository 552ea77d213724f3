/**
 * Spend per scope and period, in the session store (SQLite or PostgreSQL), so every worker counts into the same
 * rows and a restart keeps them. A scope is `global`, `profile:<name>`, `user:<platform>:<id>` (across profiles) or
 * `profile-user:<profile>:<platform>:<id>`; a period is `day:2026-11-26` or `month:2026-11`.
 *
 * A turn adds to day rows only (four: its scopes' today). A month's spend is the sum of its days' rows and the
 * month's own row, which holds the month's 80 % notice mark and what resets moved (a day's reset moves the day's spend
 * there, so the month keeps counting it; a month's reset puts the negative of its days' sum there, so the days keep
 * theirs). Eight rows a turn (day and month) cost PostgreSQL a tenth of its CPU a message in the queue bench.
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
import { registerMigrations, type Sql, type SqlValue, type SqlWrite } from '@herald/agent-core';

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
export const SPEND_MONTH_FROM_DAYS_MIGRATION_VERSION = 503;

/**
 * Turns wrote a day row and a month row in the same statement; a reset deleted either. Each month's spend moves to its
 * shard-0 row, less what its days hold: what is left is what a reset took from a day (the month kept it) or, negative,
 * what a month's reset took from its days (they kept it).
 */
const sumOf = (column: string, rows: string): string => `COALESCE((SELECT SUM(r.${column}) FROM spend AS r WHERE r.scope = spend.scope AND ${rows}), 0)`;
const MONTH_ROWS = 'r.period = spend.period';
const DAY_ROWS = "r.period BETWEEN 'day:' || substr(spend.period, 7) || '-01' AND 'day:' || substr(spend.period, 7) || '-31'";
const MONTH_FROM_DAYS_SQL = `INSERT INTO spend (scope, period, shard, tokens, cost_usd, updated_at)
  SELECT DISTINCT k.scope, k.period, 0, 0, 0, 0 FROM (
    SELECT scope, 'month:' || substr(period, 5, 7) AS period FROM spend WHERE period LIKE 'day:%'
    UNION SELECT scope, period FROM spend WHERE period LIKE 'month:%'
  ) AS k
  WHERE NOT EXISTS (SELECT 1 FROM spend AS m WHERE m.scope = k.scope AND m.period = k.period AND m.shard = 0);
UPDATE spend SET tokens = ${sumOf('tokens', MONTH_ROWS)} - ${sumOf('tokens', DAY_ROWS)},
    cost_usd = ${sumOf('cost_usd', MONTH_ROWS)} - ${sumOf('cost_usd', DAY_ROWS)}
  WHERE period LIKE 'month:%' AND shard = 0;
DELETE FROM spend WHERE period LIKE 'month:%' AND shard <> 0;`;
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
  {
    version: SPEND_MONTH_FROM_DAYS_MIGRATION_VERSION,
    name: 'budgets: a month is the sum of its days',
    sql: { sqlite: MONTH_FROM_DAYS_SQL, postgres: MONTH_FROM_DAYS_SQL },
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
  /** The sum of the summed amounts' sizes (SUM(ABS(cost_usd))): what a sum's rounding error scales with. */
  cost_size?: number | string | null;
}

/**
 * A sum of money within this share of its terms' sizes is zero: a month's reset leaves its days and the negative of
 * their sum, which add up to zero give or take the rounding of a few hundred doubles.
 */
const ROUNDING = 1e-12;

const fromRow = (r: Row): SpendRow => {
  const costUsd = Number(r.cost_usd ?? 0);
  return {
    scope: r.scope,
    period: r.period,
    tokens: Number(r.tokens ?? 0),
    costUsd: Math.abs(costUsd) <= ROUNDING * Number(r.cost_size ?? 0) ? 0 : costUsd,
    warned: r.warned_at !== null,
  };
};

/** The day rows a period's spend adds up besides its own (first and last key): a day none, a month its days. */
function daysOf(period: string): [string, string] {
  if (!period.startsWith('month:')) return [period, period];
  const month = period.slice('month:'.length);
  return [`day:${month}-01`, `day:${month}-31`];
}

/** The month a day counts in (`day:2026-11-26` → `month:2026-11`). */
const monthOf = (day: string): string => `month:${day.slice('day:'.length, 'day:'.length + 7)}`;

/**
 * One period's spend per scope, its shards (and for a month, its days) summed; the notice mark is the period's own.
 * Parameters: the period three times, its days' first and last key.
 */
const PERIOD_SUMS = `SUM(tokens) AS tokens, SUM(cost_usd) AS cost_usd, SUM(ABS(cost_usd)) AS cost_size,
  MAX(CASE WHEN period = ? THEN warned_at END) AS warned_at FROM spend WHERE (period = ? OR period BETWEEN ? AND ?)`;
const periodParams = (period: string): SqlValue[] => [period, period, ...daysOf(period)];

/** The row a turn adds to: its statement's server process's on PostgreSQL, the one row on SQLite. */
const SHARD_ADDED_TO = { postgres: `pg_backend_pid() % ${SPEND_SHARDS}`, sqlite: '0' } as const;

/** The upsert of `rows` rows, its text built once per row count (a turn counts in the same few every time). */
const addSqlByRows = new Map<string, string>();
function addSql(rows: number, dialect: Sql['dialect']): string {
  const key = `${dialect}:${rows}`;
  let text = addSqlByRows.get(key);
  if (text === undefined) {
    const row = `(?, ?, ${SHARD_ADDED_TO[dialect]}, ?, ?, ?)`;
    text = `INSERT INTO spend (scope, period, shard, tokens, cost_usd, updated_at) VALUES ${Array.from({ length: rows }, () => row).join(', ')}
       ON CONFLICT (scope, period, shard) DO UPDATE SET tokens = spend.tokens + excluded.tokens,
         cost_usd = spend.cost_usd + excluded.cost_usd, updated_at = excluded.updated_at`;
    addSqlByRows.set(key, text);
  }
  return text;
}

export class SpendStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Adds one turn's spend to every (scope, period) it counts in, in one statement (a turn counts in several: user,
   * profile and global, today), on its server process's shard; joins the caller's transaction. The rows go in
   * the callers' one order of keys, so two turns that meet on a row wait for each other rather than deadlock.
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
    for (const [i, { scope, period }] of keys.entries()) {
      if (keys.findIndex((k) => k.scope === scope && k.period === period) < i) continue;
      params.push(scope, period, tokens, costUsd, now);
      rows++;
    }
    return { sql: addSql(rows, this.sql.dialect), params };
  }

  /** The spend of a scope in a day or a month (a month's is its days' and its own row's). */
  async get(scope: string, period: string): Promise<SpendRow> {
    const row = await this.sql.get<Row>(`SELECT CAST(? AS TEXT) AS scope, CAST(? AS TEXT) AS period, ${PERIOD_SUMS} AND scope = ?`, [
      scope,
      period,
      ...periodParams(period),
      scope,
    ]);
    return fromRow(row ?? { scope, period, tokens: 0, cost_usd: 0, warned_at: null });
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

  /** Spend in these periods, scopes starting with `scopePrefix` (all when empty), most spent first; none where none is. */
  async list(periods: readonly string[], scopePrefix = '', limit = 500): Promise<SpendRow[]> {
    if (periods.length === 0) return [];
    const one = `SELECT scope, CAST(? AS TEXT) AS period, ${PERIOD_SUMS} AND substr(scope, 1, ?) = ? GROUP BY scope`;
    const rows = await this.sql.all<Row>(
      `SELECT * FROM (${periods.map(() => one).join(' UNION ALL ')}) AS sums
       WHERE tokens <> 0 OR ABS(cost_usd) > ${ROUNDING} * cost_size OR warned_at IS NOT NULL
       ORDER BY cost_usd DESC, tokens DESC, scope, period LIMIT ?`,
      [...periods.flatMap((period) => [period, ...periodParams(period), scopePrefix.length, scopePrefix]), limit],
    );
    return rows.map(fromRow);
  }

  /**
   * Forgets the spend of one scope in these periods (an admin's reset); returns how many of the periods had any. A
   * day's spend goes on counting in its month, and a month's reset leaves its days' spend to the days.
   */
  async reset(scope: string, periods: readonly string[]): Promise<number> {
    return this.sql.transaction(async () => {
      // Two resets of a scope at once would each add the negative of the same days' sum: one after the other.
      await this.sql.lock(`spend-reset:${scope}`);
      let had = 0;
      for (const period of periods) {
        const spent = await this.get(scope, period);
        if (spent.tokens !== 0 || spent.costUsd !== 0 || spent.warned) had++;
        if (period.startsWith('month:')) await this.resetMonth(scope, period);
        else await this.resetDay(scope, period);
      }
      return had;
    });
  }

  private async resetDay(scope: string, day: string): Promise<void> {
    const gone = await this.sql.all<Row>('DELETE FROM spend WHERE scope = ? AND period = ? RETURNING tokens, cost_usd', [scope, day]);
    const tokens = gone.reduce((n, r) => n + Number(r.tokens ?? 0), 0);
    const costUsd = gone.reduce((n, r) => n + Number(r.cost_usd ?? 0), 0);
    if (day.startsWith('day:') && (tokens !== 0 || costUsd !== 0)) await this.add([{ scope, period: monthOf(day) }], tokens, costUsd);
  }

  private async resetMonth(scope: string, month: string): Promise<void> {
    const [first, last] = daysOf(month);
    const days = await this.sql.get<Row>('SELECT SUM(tokens) AS tokens, SUM(cost_usd) AS cost_usd FROM spend WHERE scope = ? AND period BETWEEN ? AND ?', [
      scope,
      first,
      last,
    ]);
    await this.sql.run('DELETE FROM spend WHERE scope = ? AND period = ?', [scope, month]);
    const tokens = Number(days?.tokens ?? 0);
    const costUsd = Number(days?.cost_usd ?? 0);
    if (tokens !== 0 || costUsd !== 0) await this.add([{ scope, period: month }], -tokens, -costUsd);
  }
}
