/**
 * `herald store backup <file>` and `herald store restore <file>`: a consistent copy of the SQLite store taken while
 * the gateway runs, and putting one back (with the gateway stopped). The file work is in agent-core's
 * sqlite-backup.ts; this is the command's side: arguments, the confirmation, and what to use on PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  allMigrations,
  backupSqliteStore,
  NotAStoreError,
  prepareSqliteRestore,
  StoreInUseError,
  type RestorePlan,
  type SqliteStoreSummary,
} from '@herald/agent-core';
import { describeStoreTarget, openStoreAt, type StoreConfig } from '../features/sessions/store-target.js';
import { formatBytes } from '../support/config/risks.js';
import { CliError, type CliIo } from './io.js';
import { HERALD_COMMAND } from '../support/herald-command.js';

/** The SQLite file, and the PostgreSQL URL that replaces it when set. */
export type StoreFiles = Pick<StoreConfig, 'db'> & { databaseUrl?: string };

export const BACKUP_USAGE = `${HERALD_COMMAND} store backup <file> [--force]`;
export const RESTORE_USAGE = `${HERALD_COMMAND} store restore <file> [--yes]`;
/** What to type to confirm a restore (unless --yes). */
const RESTORE_CONFIRMATION = 'restore';

export async function backupCommand(args: string[], config: StoreFiles, io: CliIo): Promise<number> {
  const { file, flag: force } = oneFileAnd(args, 'force', BACKUP_USAGE);
  if (config.databaseUrl) {
    const where = describeStoreTarget(config.databaseUrl);
    io.err(
      `the store is PostgreSQL (${where}): back it up with PostgreSQL's own tools, which copy it consistently while the gateway runs:\n` +
        `  pg_dump --format=custom --file ${file} '${where}'\n` +
        `and restore it into an empty database with: pg_restore --dbname '${where}' ${file}`,
    );
    return 1;
  }
  const source = config.db;
  if (!fs.existsSync(source)) throw new CliError(`no SQLite store at ${source} (set HERALD_DB)`);
  if (path.resolve(file) === path.resolve(source)) throw new CliError('the backup must go to another file than the store itself');
  if (!fs.existsSync(path.dirname(path.resolve(file)))) throw new CliError(`${path.dirname(file)}: no such directory`);
  if (fs.existsSync(file) && !force) throw new CliError(`${file} already exists; pass --force to replace it`);
  const started = performance.now();
  try {
    const summary = await backupSqliteStore(source, file);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    io.out(`backed up ${source} to ${file} in ${seconds} s: ${describe(summary)}`);
    io.out("checked: SQLite's integrity check passed on the copy");
    return 0;
  } catch (err) {
    if (err instanceof NotAStoreError) {
      io.err(`${err.message}; nothing was written`);
      return 1;
    }
    throw err;
  }
}

export async function restoreCommand(args: string[], config: StoreFiles, io: CliIo): Promise<number> {
  const { file, flag: yes } = oneFileAnd(args, 'yes', RESTORE_USAGE);
  if (config.databaseUrl) {
    const where = describeStoreTarget(config.databaseUrl);
    io.err(
      `the store is PostgreSQL (${where}): restore a pg_dump file with pg_restore --clean --if-exists --dbname '${where}' ${file} ` +
        `(gateway stopped); a SQLite backup goes into an empty PostgreSQL database with ${HERALD_COMMAND} store migrate --from ${file} --to '${where}'`,
    );
    return 1;
  }
  const target = config.db;
  let plan: RestorePlan;
  try {
    plan = await prepareSqliteRestore(file, target);
  } catch (err) {
    if (err instanceof StoreInUseError) {
      io.err(`refusing to restore: ${err.message}; nothing was changed`);
      return 1;
    }
    if (err instanceof NotAStoreError) {
      io.err(`cannot restore from it: ${err.message}; nothing was changed`);
      return 1;
    }
    throw err;
  }
  try {
    const known = new Set(allMigrations().map((m) => m.version));
    const unknown = plan.backup.versions.filter((v) => !known.has(v));
    if (unknown.length > 0) {
      io.err(
        `${file} was written by a newer Herald (schema versions ${unknown.join(', ')} are unknown to this one): upgrade Herald first; nothing was changed`,
      );
      plan.cancel();
      return 1;
    }
    io.out(`backup:  ${file}: ${describe(plan.backup)}`);
    if (plan.current) {
      io.out(`replaces: ${target}: ${describe(plan.current)}`);
      io.out(`the current store is kept as ${plan.keptAs}`);
    } else {
      io.out(`into:    ${target} (no store there yet)`);
    }
    if (!yes) {
      const answer = await io.ask(`Type "${RESTORE_CONFIRMATION}" to replace the store: `);
      if (answer?.trim() !== RESTORE_CONFIRMATION) {
        plan.cancel();
        io.err(`not restored (the answer was not "${RESTORE_CONFIRMATION}"; pass --yes to skip the question); nothing was changed`);
        return 1;
      }
    }
    await plan.commit();
  } finally {
    plan.cancel();
  }
  // Opening applies what this version's schema adds to an older backup, as the gateway would at start.
  const store = await openStoreAt(target);
  try {
    const row = await store.sql.get<{ sessions: number; messages: number }>(
      'SELECT (SELECT COUNT(*) FROM sessions) AS sessions, (SELECT COUNT(*) FROM messages) AS messages',
    );
    io.out(`restored ${target}: ${row?.sessions ?? 0} sessions, ${row?.messages ?? 0} messages; start the gateway again`);
  } finally {
    await store.close();
  }
  return 0;
}

function oneFileAnd(args: string[], flag: 'force' | 'yes', usage: string): { file: string; flag: boolean } {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { [flag]: { type: 'boolean' } } });
  if (positionals.length !== 1) throw new CliError(`usage: ${usage}`);
  return { file: positionals[0], flag: values[flag] === true };
}

function describe(s: SqliteStoreSummary): string {
  const version = s.versions.length > 0 ? Math.max(...s.versions) : 0;
  return `${s.sessions} sessions, ${s.messages} messages, ${formatBytes(s.bytes)} (schema version ${version})`;
}
