/**
 * Copies a SQLite store into PostgreSQL (`herald store migrate`): every table the plan finds (copy-plan.ts),
 * parents first, in multi-row INSERTs, keeping every id (the admin API and /retry refer to message ids).
 *
 * The whole copy is one PostgreSQL transaction, checked before it commits: the row count of every table against
 * the source, counted again at the end. Anything that goes wrong (a constraint, a dropped connection, a count
 * that does not match because something still writes to the source) rolls all of it back, so the target is
 * either the complete copy or exactly as it was, and running the command again needs no clean-up. PostgreSQL
 * copes with one large transaction well (no lock escalation; it only grows its write-ahead log). The source is
 * only read.
 */
import { planCopy, quoteIdent, StoreCopyError, type TableToCopy } from './copy-plan.js';
import { withoutNulText } from './postgres-sql.js';
import type { Sql, SqlValue } from './sql.js';

export { StoreCopyError } from './copy-plan.js';

/** Rows per INSERT: past a few hundred, bigger statements stop paying off. */
export const COPY_BATCH_ROWS = 500;
/** PostgreSQL's limit on the parameters of one statement. */
const PG_MAX_PARAMS = 65_535;
/** SQLite's row id, selected beside the columns to page through a table. */
const ROWID = '_herald_copy_rowid';

export interface CopyOptions {
  /** Copy into a target that already holds rows: rows whose key is already there are kept, the source's skipped. */
  force?: boolean;
  batchRows?: number;
  /** After every batch. */
  onProgress?: (progress: CopyProgress) => void;
  /** When a table is complete (checked only at the end, with the others). */
  onTable?: (result: TableCopyResult) => void;
}

export interface CopyProgress {
  table: string;
  rows: number;
  total: number;
}

export interface TableCopyResult {
  table: string;
  sourceRows: number;
  /** Inserted into the target. */
  copied: number;
  /** Rows whose key the target already had (only with `force`). */
  skipped: number;
  /** Text values holding NUL characters, which PostgreSQL text cannot store: copied with U+FFFD in their place. */
  nulReplaced: number;
}

export interface CopyReport {
  tables: TableCopyResult[];
  rows: number;
  ms: number;
}

/** The target already holds rows and `force` was not given; `rows` per table that has any. */
export class TargetNotEmptyError extends StoreCopyError {
  constructor(readonly rows: Readonly<Record<string, number>>) {
    super(
      `the target already holds data (${Object.entries(rows)
        .map(([t, n]) => `${t}: ${n} ${n === 1 ? 'row' : 'rows'}`)
        .join(', ')})`,
    );
  }
}

export async function copyStore(source: Sql, target: Sql, opts: CopyOptions = {}): Promise<CopyReport> {
  if (source.dialect !== 'sqlite' || target.dialect !== 'postgres') {
    throw new StoreCopyError(`copies a SQLite store into PostgreSQL, not ${source.dialect} into ${target.dialect}`);
  }
  const started = performance.now();
  const report = await target.transaction(async () => {
    const plan = await planCopy(source, target);
    const before = await countRows(target, plan);
    const occupied = Object.fromEntries([...before].filter(([, n]) => n > 0));
    if (Object.keys(occupied).length > 0 && !opts.force) throw new TargetNotEmptyError(occupied);

    const tables: TableCopyResult[] = [];
    for (const table of plan) tables.push(await copyTable(source, target, table, opts));
    for (const table of plan) await moveSequences(target, table);
    await verify(source, target, tables, before, opts.force === true);
    return { tables, rows: tables.reduce((n, t) => n + t.copied, 0), ms: performance.now() - started };
  });
  // Fresh statistics, so the planner does not wait for autovacuum to learn the tables are no longer empty. Only
  // an optimisation: the copy is committed by now, and a refusal here must not read as a failed copy.
  for (const t of report.tables) await target.exec(`ANALYZE ${quoteIdent(t.table)}`).catch(() => undefined);
  return report;
}

async function countOf(sql: Sql, table: string): Promise<number> {
  return (await sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${quoteIdent(table)}`))?.n ?? 0;
}

async function countRows(sql: Sql, plan: readonly TableToCopy[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const t of plan) counts.set(t.name, await countOf(sql, t.name));
  return counts;
}

async function copyTable(source: Sql, target: Sql, table: TableToCopy, opts: CopyOptions): Promise<TableCopyResult> {
  const { name, columns } = table;
  const total = await countOf(source, name);
  const perBatch = Math.max(1, Math.min(opts.batchRows ?? COPY_BATCH_ROWS, Math.floor(PG_MAX_PARAMS / columns.length)));
  const select = `SELECT rowid AS ${ROWID}, ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(name)} WHERE rowid > ? ORDER BY rowid LIMIT ?`;
  // Self-references are filled in afterwards, once the rows they point at are all there.
  const deferred = new Set(table.selfReferences);
  const result: TableCopyResult = { table: name, sourceRows: total, copied: 0, skipped: 0, nulReplaced: 0 };
  // Counted here; the target would make the same change itself (postgres-sql.ts).
  const clean = (v: unknown): SqlValue => {
    if (typeof v !== 'string') return v as SqlValue;
    const text = withoutNulText(v);
    if (text !== v) result.nulReplaced++;
    return text;
  };

  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const rows = await source.all<Record<string, unknown>>(select, [after, perBatch]);
    if (rows.length === 0) break;
    after = rows[rows.length - 1][ROWID] as number;
    const values: SqlValue[] = [];
    for (const row of rows) for (const c of columns) values.push(deferred.has(c) ? null : clean(row[c]));
    const { changes } = await target.run(insertSql(table, rows.length, opts.force === true), values);
    result.copied += changes;
    result.skipped += rows.length - changes;
    opts.onProgress?.({ table: name, rows: result.copied + result.skipped, total });
    if (rows.length < perBatch) break;
  }
  for (const column of table.selfReferences) await fillSelfReference(source, target, table, column, perBatch);
  opts.onTable?.(result);
  return result;
}

function insertSql(table: TableToCopy, rows: number, force: boolean): string {
  const row = `(${table.columns.map(() => '?').join(', ')})`;
  const conflict = force ? ' ON CONFLICT DO NOTHING' : '';
  return `INSERT INTO ${quoteIdent(table.name)} (${table.columns.map(quoteIdent).join(', ')}) VALUES ${Array(rows).fill(row).join(', ')}${conflict}`;
}

/**
 * Sets `column` on the copied rows, matched by primary key, many rows per UPDATE. Rows the target had already
 * (`force`) keep a reference they have.
 */
async function fillSelfReference(source: Sql, target: Sql, table: TableToCopy, column: string, perBatch: number): Promise<void> {
  const keys = table.primaryKey;
  const q = quoteIdent;
  const select = `SELECT rowid AS ${ROWID}, ${keys.map(q).join(', ')}, ${q(column)} FROM ${q(table.name)}
    WHERE ${q(column)} IS NOT NULL AND rowid > ? ORDER BY rowid LIMIT ?`;
  const fields = [...keys, column];
  const cast = (c: string): string => `CAST(? AS ${table.targetTypes[c]})`;
  const tuple = `(${fields.map(cast).join(', ')})`;
  const alias = fields.map((_, i) => `v${i}`);
  const rowsPerUpdate = Math.max(1, Math.min(perBatch, Math.floor(PG_MAX_PARAMS / fields.length)));
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const rows = await source.all<Record<string, unknown>>(select, [after, rowsPerUpdate]);
    if (rows.length === 0) break;
    after = rows[rows.length - 1][ROWID] as number;
    const match = keys.map((k, i) => `t.${q(k)} = v.${alias[i]}`).join(' AND ');
    await target.run(
      `UPDATE ${q(table.name)} AS t SET ${q(column)} = v.${alias[keys.length]}
       FROM (VALUES ${Array(rows.length).fill(tuple).join(', ')}) AS v(${alias.join(', ')})
       WHERE ${match} AND t.${q(column)} IS NULL`,
      rows.flatMap((r) => fields.map((f) => r[f] as SqlValue)),
    );
    if (rows.length < rowsPerUpdate) break;
  }
}

/** Identity columns received explicit ids: their sequences must continue above the highest. */
async function moveSequences(target: Sql, table: TableToCopy): Promise<void> {
  for (const column of table.identityColumns) {
    // max() of no rows is NULL, and setval(seq, NULL) leaves the sequence alone.
    await target.get(`SELECT setval(pg_get_serial_sequence(?, ?), max(${quoteIdent(column)})) AS v FROM ${quoteIdent(table.name)}`, [
      quoteIdent(table.name),
      column,
    ]);
  }
}

/** Row counts per table, the source counted again now; throws (rolling the copy back) when one is off. */
async function verify(source: Sql, target: Sql, tables: readonly TableCopyResult[], before: Map<string, number>, force: boolean): Promise<void> {
  const problems: string[] = [];
  for (const t of tables) {
    const inSource = await countOf(source, t.table);
    const inTarget = await countOf(target, t.table);
    const had = before.get(t.table) ?? 0;
    // With force the target keeps rows of its own: what was added and skipped must account for the source.
    const ok = force ? inTarget === had + t.copied && inSource === t.copied + t.skipped : inTarget === inSource;
    if (!ok)
      problems.push(
        `${t.table}: ${inSource} rows in the source, ${inTarget} in the target${force ? ` (${had} there before, ${t.copied} copied, ${t.skipped} skipped)` : ''}`,
      );
  }
  if (problems.length > 0) {
    throw new StoreCopyError(
      `the copy does not match the source, so none of it was kept:\n  ${problems.join('\n  ')}\n` +
        'did something write to the source during the copy? stop it and copy again',
    );
  }
}
