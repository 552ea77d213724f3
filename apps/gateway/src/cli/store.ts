/**
 * `herald store backup|restore` are in store-backup.ts.
 * `herald store migrate --to postgres://… [--from <sqlite file>] [--force]`: copies a SQLite store (by default the
 * configured HERALD_DB) into PostgreSQL, so a deployment that grows onto several machines keeps its history.
 * The copy is one transaction on the target, checked row count by row count before it commits (see copy.ts in
 * agent-core). The source's rows are only read; opening it applies pending schema migrations, as every herald
 * command does. Stop the gateway first: rows written during the copy fail the check.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import {
  appliedVersions,
  copyStore,
  isPostgresUrl,
  openSql,
  SessionStore,
  StoreCopyError,
  TargetNotEmptyError,
  type CopyProgress,
  type CopyReport,
  type TableCopyResult,
} from '@herald/agent-core';
import { urlPassword } from '../support/config/load.js';
import { HERALD_COMMAND } from '../support/herald-command.js';
import { describeStoreTarget, openStoreAt } from '../features/sessions/store-target.js';
import { CliError, type CliIo } from './io.js';
import { BACKUP_USAGE, backupCommand, RESTORE_USAGE, restoreCommand, type StoreFiles } from './store-backup.js';

export const STORE_USAGE = `${HERALD_COMMAND} store migrate --to postgres://user:password@host:5432/db [--from <sqlite file>] [--force]
${BACKUP_USAGE}
${RESTORE_USAGE}`;

/** A progress line for a large table every so many rows, besides the one when it is done. */
const PROGRESS_EVERY_ROWS = 50_000;

/** `config.db` is the default source: the SQLite file the gateway used before it moves. */
export async function storeCommand(args: string[], config: StoreFiles, io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'backup') return backupCommand(rest, config, io);
  if (sub === 'restore') return restoreCommand(rest, config, io);
  if (sub !== 'migrate') throw new CliError(`usage: ${STORE_USAGE}`);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { to: { type: 'string' }, from: { type: 'string' }, force: { type: 'boolean' } },
  });
  if (positionals.length > 0)
    throw new CliError(`herald store migrate takes no arguments besides its options (got ${positionals.join(' ')})\nusage: ${STORE_USAGE}`);
  const to = values.to;
  if (!to) throw new CliError(`--to: the PostgreSQL database to copy into is required\nusage: ${STORE_USAGE}`);
  // Not echoed: a mistyped URL may still hold a password.
  if (!isPostgresUrl(to)) throw new CliError('--to: must be a postgres:// (or postgresql://) URL');
  const from = values.from ?? config.db;
  if (isPostgresUrl(from)) throw new CliError('--from: must be a SQLite file (the copy goes from SQLite into PostgreSQL)');
  if (!fs.existsSync(from)) throw new CliError(`no SQLite store at ${from} (name it with --from, or set HERALD_DB)`);
  return migrate(from, to, values.force === true, io);
}

async function migrate(from: string, to: string, force: boolean, io: CliIo): Promise<number> {
  const where = describeStoreTarget(to);
  const fail = (message: string): number => {
    io.err(hidePassword(message, to));
    return 1;
  };
  let source: SessionStore | undefined;
  let target: SessionStore | undefined;
  try {
    try {
      source = await openSource(from);
    } catch (err) {
      return fail(`cannot open ${from}: ${messageOf(err)}; nothing was copied`);
    }
    if (!source) return fail(`${from} is not a Herald store (it has no schema_migrations table); nothing was copied`);
    try {
      target = await openStoreAt(to);
    } catch (err) {
      return fail(`cannot open ${where}: ${messageOf(err)}; nothing was copied`);
    }
    io.out(`copying ${from} into ${where}${force ? ' (--force: rows already there are kept)' : ''}`);
    const report = await copyStore(source.sql, target.sql, {
      force,
      onProgress: progressPrinter(io),
      onTable: (t) => io.out(tableLine(t)),
    });
    for (const line of summary(report, where, force)) io.out(line);
    return 0;
  } catch (err) {
    if (err instanceof TargetNotEmptyError) {
      return fail(
        `${where}: ${err.message}, so nothing was copied. To add the source's rows to it anyway, run again with --force ` +
          "(a row whose key the target already has is kept, and the source's one skipped).",
      );
    }
    if (err instanceof StoreCopyError) return fail(`${err.message}\n${where} is unchanged`);
    return fail(`copy failed, so nothing was kept in ${where}: ${messageOf(err)}`);
  } finally {
    await source?.close();
    await target?.close();
  }
}

/**
 * The source store, migrated to this version's schema like every herald command does (its rows are only read),
 * or undefined when the file is not a Herald store: migrating would create Herald's tables in someone else's file.
 */
async function openSource(file: string): Promise<SessionStore | undefined> {
  const sql = await openSql(file);
  if ((await appliedVersions(sql)).length === 0) {
    await sql.close();
    return undefined;
  }
  return SessionStore.on(sql);
}

function progressPrinter(io: CliIo): (p: CopyProgress) => void {
  let table = '';
  let printedAt = 0;
  return (p) => {
    if (p.table !== table) [table, printedAt] = [p.table, 0];
    if (p.rows < p.total && p.rows - printedAt >= PROGRESS_EVERY_ROWS) {
      printedAt = p.rows;
      io.out(`${p.table}: ${p.rows} of ${p.total} rows…`);
    }
  };
}

function summary(report: CopyReport, where: string, force: boolean): string[] {
  const seconds = report.ms / 1000;
  const rate = seconds > 0 ? Math.round(report.rows / seconds) : report.rows;
  return [
    force
      ? `checked: every row of the ${report.tables.length} tables was copied, or skipped because its key was already in the target`
      : `checked: all ${report.tables.length} tables have as many rows in the target as in the source`,
    `copied ${count(report.rows, 'row')} in ${seconds.toFixed(1)} s (${rate} rows/s) into ${where}`,
    'next: stop the gateway if it still runs, set HERALD_DATABASE_URL to this database for every process, and start it again',
  ];
}

function tableLine(t: TableCopyResult): string {
  const notes = [
    t.skipped > 0 && `${t.skipped} already there, skipped`,
    t.nulReplaced > 0 && `${count(t.nulReplaced, 'value')} held NUL characters, which PostgreSQL text cannot store: copied as U+FFFD`,
  ].filter(Boolean);
  return `${t.table}: ${count(t.copied, 'row')}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error && !err.message.includes(err.cause.message) ? ` (${err.cause.message})` : '';
  return `${err.message}${cause}`;
}

/** Errors may quote the URL or its password; neither belongs on a terminal or in a CI log. */
function hidePassword(text: string, url: string): string {
  let out = text.replaceAll(url, describeStoreTarget(url));
  for (const secret of urlPassword(url)) out = out.replaceAll(secret, '***');
  return out;
}
