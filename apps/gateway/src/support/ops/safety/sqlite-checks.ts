/**
 * Where the SQLite store lives: on a network filesystem SQLite's locks and the WAL's shared memory are not
 * reliable (corruption, lost writes); on a nearly full disk writes fail and turns stop.
 */
import fs from 'node:fs';
import { formatBytes, type SafetyFinding } from '../../config/risks.js';
import { existingDir, filesystemOf, isNetworkFs } from './mounts.js';

const MB = 1024 * 1024;

export interface SqliteCheckOptions {
  /** Warn when less than this many MB are free (HERALD_STORE_MIN_FREE_MB). */
  minFreeMb: number;
  /** For tests: another mountinfo file. */
  mountinfo?: string;
}

export function checkSqlite(file: string, opts: SqliteCheckOptions): SafetyFinding[] {
  return [filesystem(file, opts.mountinfo), diskSpace(file, opts.minFreeMb)];
}

function filesystem(file: string, mountinfo?: string): SafetyFinding {
  const base = { id: 'sqlite-network-fs', check: 'sqlite filesystem' } as const;
  const fsInfo = filesystemOf(file, mountinfo);
  if (!fsInfo) return { ...base, status: 'ok', detail: `${file} is on a local filesystem` };
  const where = fsInfo.mountPoint ? ` (${fsInfo.source ?? '?'} on ${fsInfo.mountPoint})` : '';
  if (!isNetworkFs(fsInfo.fsType)) return { ...base, status: 'ok', detail: `${file} is on a local filesystem (${fsInfo.fsType})` };
  return {
    ...base,
    status: 'warn',
    detail: `${file} is on a network filesystem: ${fsInfo.fsType}${where}`,
    risk: "SQLite's file locks and its write-ahead log's shared memory do not work reliably over a network filesystem: the store can be corrupted or lose writes",
    fix: 'put HERALD_DB on a local disk, or use PostgreSQL (HERALD_DATABASE_URL)',
  };
}

function diskSpace(file: string, minFreeMb: number): SafetyFinding {
  const base = { id: 'disk-space', check: 'sqlite disk' } as const;
  const dir = existingDir(file);
  const stats = fs.statfsSync(dir);
  const free = stats.bavail * stats.bsize;
  const total = stats.blocks * stats.bsize;
  const storeBytes = sizeOf(file) + sizeOf(`${file}-wal`);
  // A backup or a VACUUM needs as much room again as the store takes.
  const needed = Math.max(minFreeMb * MB, storeBytes);
  const detail = `${formatBytes(free)} free of ${formatBytes(total)} in ${dir} (the store takes ${formatBytes(storeBytes)})`;
  if (free >= needed) return { ...base, status: 'ok', detail };
  return {
    ...base,
    status: 'warn',
    detail: `disk nearly full: ${detail}`,
    risk: 'when the disk fills up, writes fail: replies are no longer recorded and conversations stop',
    fix: `free space or move the store (this warns below ${formatBytes(needed)} free: HERALD_STORE_MIN_FREE_MB, or the store's own size)`,
  };
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
