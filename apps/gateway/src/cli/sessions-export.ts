/**
 * `herald sessions export --format sharegpt`: trajectories as JSONL on stdout or into `--out <file>` (written to
 * a temporary name and renamed, so a failed export never leaves half a file behind).
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import type { SessionSource, SessionStore } from '@herald/agent-core';
import { EXPORT_FORMATS, EXPORT_STATUSES, exportShareGpt, parseExportDate, type ExportStatus } from '../features/sessions/export.js';
import { CliError, type CliIo } from './io.js';

export interface ExportOptions {
  format?: string;
  source?: SessionSource;
  since?: string;
  until?: string;
  status?: string;
  out?: string;
}

export async function exportSessions(store: SessionStore, opts: ExportOptions, io: CliIo): Promise<number> {
  if (opts.format === undefined || !(EXPORT_FORMATS as readonly string[]).includes(opts.format)) {
    throw new CliError(`--format: must be one of ${EXPORT_FORMATS.join(', ')} (got ${JSON.stringify(opts.format ?? '')})`);
  }
  if (opts.status !== undefined && !(EXPORT_STATUSES as readonly string[]).includes(opts.status)) {
    throw new CliError(`--status: must be one of ${EXPORT_STATUSES.join(', ')} (got ${JSON.stringify(opts.status)})`);
  }
  const date = (v: string | undefined, option: string): number | undefined => {
    if (v === undefined) return undefined;
    try {
      return parseExportDate(v, option);
    } catch (err) {
      throw new CliError((err as Error).message);
    }
  };
  const lines = exportShareGpt(store, {
    source: opts.source,
    since: date(opts.since, '--since'),
    until: date(opts.until, '--until'),
    status: opts.status as ExportStatus | undefined,
  });
  if (opts.out === undefined) {
    let n = 0;
    for await (const line of lines) {
      io.out(line.trimEnd());
      n++;
    }
    io.err(`exported ${n} session${n === 1 ? '' : 's'}`);
    return 0;
  }
  const partial = `${opts.out}.partial`;
  const file = createWriteStream(partial);
  let n = 0;
  try {
    for await (const line of lines) {
      if (!file.write(line)) await new Promise<void>((r) => file.once('drain', () => r()));
      n++;
    }
    file.end();
    await finished(file);
    await rename(partial, opts.out);
  } catch (err) {
    file.destroy();
    await rm(partial, { force: true });
    throw err;
  }
  io.out(`exported ${n} session${n === 1 ? '' : 's'} to ${opts.out}`);
  return 0;
}
