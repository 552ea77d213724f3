/**
 * What copying a SQLite store into PostgreSQL has to do, read from the two databases themselves rather than from
 * a list kept here: the source's tables (its schema bookkeeping, SQLite's internals and full-text shadow tables
 * left out, since PostgreSQL indexes the text by itself), their columns, the order their foreign keys need, the
 * columns that refer to their own table (sessions.parent_session_id), and the target's identity columns. A
 * table a later migration adds is copied like the others as long as it has the same columns on both sides.
 */
import { StoreError } from './errors.js';
import { appliedVersions } from './migrations.js';
import type { Sql } from './sql.js';

export interface TableToCopy {
  name: string;
  /** In the source's order; the target has exactly these. */
  columns: string[];
  /** The target's primary key columns (never empty: tables without one are refused). */
  primaryKey: string[];
  /** Columns referring to this table's own rows: inserted empty, filled in once every row is there. */
  selfReferences: string[];
  /** The target's identity (or serial) columns, whose sequences must move past the copied ids. */
  identityColumns: string[];
  /** The target's type per column, for casting parameters where PostgreSQL cannot infer them. */
  targetTypes: Record<string, string>;
}

/** A copy that must not start or did not check out: the message says what to do. Nothing was committed. */
export class StoreCopyError extends StoreError {}

/** Bookkeeping that each side keeps for itself. */
// The search index's progress belongs to the SQLite file's own index (a target indexes what it was given itself).
const NOT_COPIED = new Set(['schema_migrations', 'search_index_progress']);

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

interface MasterRow {
  name: string;
  sql: string | null;
}

interface TargetColumn {
  table_name: string;
  column_name: string;
  data_type: string;
  is_identity: string;
  column_default: string | null;
}

/** The source's tables in creation order, without SQLite internals, virtual tables and their shadow tables. */
export async function sourceTableNames(source: Sql): Promise<string[]> {
  const rows = await source.all<MasterRow>(
    `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid`,
  );
  const virtual = rows.filter((r) => /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(r.sql ?? '')).map((r) => r.name);
  const isShadow = (name: string): boolean => virtual.some((v) => name.startsWith(`${v}_`));
  return rows.map((r) => r.name).filter((name) => !NOT_COPIED.has(name) && !virtual.includes(name) && !isShadow(name));
}

/**
 * Every table to copy, parents before the tables that refer to them. Throws StoreCopyError naming every
 * problem at once: a table missing on the target, different columns, no primary key, a foreign-key cycle
 * between tables, a source written by a newer Herald.
 */
export async function planCopy(source: Sql, target: Sql): Promise<TableToCopy[]> {
  const problems: string[] = [];
  const known = new Set(await appliedVersions(target));
  const newer = (await appliedVersions(source)).filter((v) => !known.has(v));
  if (newer.length > 0) {
    problems.push(`the source has schema versions the target lacks (${newer.join(', ')}): it was written by a newer Herald; upgrade this one`);
  }

  const targetColumns = await target.all<TargetColumn>(
    `SELECT table_name, column_name, data_type, is_identity, column_default
     FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  );
  const targetPrimaryKeys = await target.all<{ table_name: string; column_name: string }>(
    `SELECT tc.table_name, kcu.column_name
     FROM information_schema.table_constraints tc
     JOIN information_schema.key_column_usage kcu
       ON kcu.constraint_name = tc.constraint_name AND kcu.constraint_schema = tc.constraint_schema AND kcu.table_name = tc.table_name
     WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema()
     ORDER BY tc.table_name, kcu.ordinal_position`,
  );

  const tables: TableToCopy[] = [];
  const references = new Map<string, Set<string>>();
  for (const name of await sourceTableNames(source)) {
    const columns = (await source.all<{ name: string }>('SELECT name FROM pragma_table_info(?) ORDER BY cid', [name])).map((c) => c.name);
    if ((await source.get<{ wr: number }>(`SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, [name]))?.wr === 1) {
      problems.push(`table ${name} is a WITHOUT ROWID table, which this copy cannot page through`);
      continue;
    }
    const onTarget = targetColumns.filter((c) => c.table_name === name);
    if (onTarget.length === 0) {
      problems.push(`table ${name} is in the source but not in the target (is the module that creates it loaded?)`);
      continue;
    }
    const missing = columns.filter((c) => !onTarget.some((t) => t.column_name === c));
    const extra = onTarget.map((t) => t.column_name).filter((c) => !columns.includes(c));
    if (missing.length > 0 || extra.length > 0) {
      const parts = [missing.length > 0 && `only in the source: ${missing.join(', ')}`, extra.length > 0 && `only in the target: ${extra.join(', ')}`];
      problems.push(`table ${name} has different columns (${parts.filter(Boolean).join('; ')})`);
      continue;
    }
    const primaryKey = targetPrimaryKeys.filter((k) => k.table_name === name).map((k) => k.column_name);
    if (primaryKey.length === 0) {
      problems.push(`table ${name} has no primary key on the target, so a copy could not be checked or resumed`);
      continue;
    }
    const keys = await source.all<{ table: string; from: string }>('SELECT "table", "from" FROM pragma_foreign_key_list(?)', [name]);
    references.set(name, new Set(keys.map((k) => k.table).filter((t) => t !== name)));
    tables.push({
      name,
      columns,
      primaryKey,
      selfReferences: keys.filter((k) => k.table === name).map((k) => k.from),
      identityColumns: onTarget.filter((c) => c.is_identity === 'YES' || c.column_default?.startsWith('nextval(')).map((c) => c.column_name),
      targetTypes: Object.fromEntries(onTarget.map((c) => [c.column_name, c.data_type])),
    });
  }
  if (problems.length > 0) throw new StoreCopyError(`cannot copy this store:\n  ${problems.join('\n  ')}`);
  return inDependencyOrder(tables, references);
}

/** Tables referred to come first; otherwise the source's order. Throws on a cycle between tables. */
function inDependencyOrder(tables: TableToCopy[], references: Map<string, Set<string>>): TableToCopy[] {
  const names = new Set(tables.map((t) => t.name));
  const ordered: TableToCopy[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const next = tables.find((t) => !placed.has(t.name) && [...(references.get(t.name) ?? [])].every((r) => placed.has(r) || !names.has(r)));
    if (!next) {
      const stuck = tables.filter((t) => !placed.has(t.name)).map((t) => t.name);
      throw new StoreCopyError(`cannot copy this store: the foreign keys of ${stuck.join(', ')} form a cycle`);
    }
    ordered.push(next);
    placed.add(next.name);
  }
  return ordered;
}
