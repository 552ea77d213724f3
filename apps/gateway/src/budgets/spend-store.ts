/**
 * Spend per scope and period, in the session store (SQLite or PostgreSQL), so every worker counts into the same
 * rows and a restart keeps them. A scope is `global`, `profile:<name>`, `user:<platform>:<id>` (across profiles) or
 * `profile-user:<profile>:<platform>:<id>`; a period is `day:2026-11-26` or `month:2026-11`.
 */
import { registerMigrations, type Sql } from '@herald/agent-core';

export const SPEND_MIGRATION_VERSION = 501;
registerMigrations({
  version: SPEND_MIGRATION_VERSION,
  name: 'budgets: spend per scope and period',
  sql: {
    sqlite: `CREATE TABLE IF NOT EXISTS spend (
  scope      TEXT NOT NULL,
  period     TEXT NOT NULL,
  tokens     INTEGER NOT NULL DEFAULT 0,
  cost_usd   REAL NOT NULL DEFAULT 0,
  warned_at  INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope, period)
);`,
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
});

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
  tokens: number | string;
  cost_usd: number | string;
  warned_at: number | string | null;
}

const fromRow = (r: Row): SpendRow => ({ scope: r.scope, period: r.period, tokens: Number(r.tokens), costUsd: Number(r.cost_usd), warned: r.warned_at !== null });

/** The upsert of `rows` rows, its text built once per row count (a turn counts in the same few every time). */
const addSqlByRows = new Map<number, string>();
function addSql(rows: number): string {
  let text = addSqlByRows.get(rows);
  if (text === undefined) {
    text = `INSERT INTO spend (scope, period, tokens, cost_usd, updated_at) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?)').join(', ')}
       ON CONFLICT (scope, period) DO UPDATE SET tokens = spend.tokens + excluded.tokens,
         cost_usd = spend.cost_usd + excluded.cost_usd, updated_at = excluded.updated_at`;
    addSqlByRows.set(rows, text);
  }
  return text;
}

export class SpendStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Adds one turn's spend to every (scope, period) it counts in, in one statement (a turn counts in several: user,
   * profile and global, by day and by month); joins the caller's transaction.
   */
  async add(keys: ReadonlyArray<{ scope: string; period: string }>, tokens: number, costUsd: number): Promise<void> {
    // One row each: PostgreSQL refuses an upsert that touches a row twice.
    const unique = [...new Map(keys.map((k) => [`${k.scope}\u0000${k.period}`, k])).values()];
    if (unique.length === 0) return;
    const now = Date.now();
    await this.sql.run(addSql(unique.length), unique.flatMap(({ scope, period }) => [scope, period, tokens, costUsd, now]));
  }

  async get(scope: string, period: string): Promise<SpendRow> {
    const row = await this.sql.get<Row>('SELECT scope, period, tokens, cost_usd, warned_at FROM spend WHERE scope = ? AND period = ?', [scope, period]);
    return row ? fromRow(row) : { scope, period, tokens: 0, costUsd: 0, warned: false };
  }

  /** Marks the 80 % notice given; true for the one caller that marked it (every other worker gets false). */
  async markWarned(scope: string, period: string): Promise<boolean> {
    const res = await this.sql.run('UPDATE spend SET warned_at = ? WHERE scope = ? AND period = ? AND warned_at IS NULL', [Date.now(), scope, period]);
    return res.changes === 1;
  }

  /** Rows of these periods, scopes starting with `scopePrefix` (all when empty), most spent first. */
  async list(periods: readonly string[], scopePrefix = '', limit = 500): Promise<SpendRow[]> {
    if (periods.length === 0) return [];
    const marks = periods.map(() => '?').join(', ');
    const rows = await this.sql.all<Row>(
      `SELECT scope, period, tokens, cost_usd, warned_at FROM spend WHERE period IN (${marks}) AND substr(scope, 1, ?) = ?
       ORDER BY cost_usd DESC, tokens DESC, scope LIMIT ?`,
      [...periods, scopePrefix.length, scopePrefix, limit],
    );
    return rows.map(fromRow);
  }

  /** Forgets the spend of one scope in these periods (an admin's reset); returns how many rows went. */
  async reset(scope: string, periods: readonly string[]): Promise<number> {
    if (periods.length === 0) return 0;
    const marks = periods.map(() => '?').join(', ');
    const res = await this.sql.run(`DELETE FROM spend WHERE scope = ? AND period IN (${marks})`, [scope, ...periods]);
    return res.changes;
  }
}
