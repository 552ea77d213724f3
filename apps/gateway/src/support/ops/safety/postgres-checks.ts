/**
 * The PostgreSQL store: every index the migrations create should be there (a restore without indexes, or one
 * dropped by hand, turns each lookup into a scan of the whole table), and the server should still get fixes.
 */
import { allMigrations, migrationSql, type Sql } from '@herald/agent-core';
import type { SafetyFinding } from '../../config/risks.js';

/** Community support ends (postgresql.org versioning policy: five years after the major release). */
const END_OF_SUPPORT: Readonly<Record<number, string>> = {
  11: '2023-11-09',
  12: '2024-11-21',
  13: '2025-11-13',
  14: '2026-11-12',
  15: '2027-11-11',
  16: '2028-11-09',
  17: '2029-11-08',
  18: '2030-11-14',
};
/** Majors before this one were out of support before the table starts. */
const OLDEST_IN_TABLE = 11;

export async function checkPostgres(sql: Sql, now = new Date()): Promise<SafetyFinding[]> {
  return [await indexes(sql), await serverVersion(sql, now)];
}

export interface ExpectedIndex {
  name: string;
  statement: string;
}

/** Indexes the migrations create on PostgreSQL (later DROP INDEX statements taken into account), in order. */
export function expectedIndexes(): ExpectedIndex[] {
  const found = new Map<string, string>();
  const create = /CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?"?(\w+)"?\s+ON\b[^;]*/gi;
  const drop = /DROP\s+INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+EXISTS\s+)?"?(\w+)"?/gi;
  for (const m of allMigrations()) {
    const text = migrationSql(m, 'postgres');
    // In statement order within a migration: a drop after a create removes it, a create after a drop adds it back.
    const events = [
      ...[...text.matchAll(create)].map((x) => ({ at: x.index, name: x[1].toLowerCase(), statement: x[0].trim() })),
      ...[...text.matchAll(drop)].map((x) => ({ at: x.index, name: x[1].toLowerCase(), statement: null })),
    ].sort((a, b) => a.at - b.at);
    for (const e of events) {
      if (e.statement === null) found.delete(e.name);
      else found.set(e.name, e.statement);
    }
  }
  return [...found].map(([name, statement]) => ({ name, statement }));
}

async function indexes(sql: Sql): Promise<SafetyFinding> {
  const base = { id: 'postgres-indexes', check: 'postgres indexes' } as const;
  const rows = await sql.all<{ name: string }>('SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema()');
  const present = new Set(rows.map((r) => r.name.toLowerCase()));
  const expected = expectedIndexes();
  const missing = expected.filter((i) => !present.has(i.name));
  if (missing.length === 0) return { ...base, status: 'ok', detail: `all ${expected.length} indexes the migrations create are there` };
  return {
    ...base,
    status: 'warn',
    detail: `missing ${missing.length} of ${expected.length} indexes: ${missing.map((i) => i.name).join(', ')}`,
    risk: 'lookups that need them read whole tables: turns, /history and search slow down as the history grows',
    fix: `recreate them: ${missing.map((i) => `${i.statement};`).join(' ')}`,
  };
}

async function serverVersion(sql: Sql, now: Date): Promise<SafetyFinding> {
  const base = { id: 'postgres-version', check: 'postgres version' } as const;
  const row = await sql.get<{ num: string; version: string }>(
    "SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version",
  );
  const num = Number(row?.num ?? 0);
  // 90600 → 9.6; 150004 → 15 (majors are one number from 10 on).
  const major = num >= 100_000 ? Math.floor(num / 10_000) : Math.floor(num / 100) / 100;
  const version = row?.version ?? String(num);
  const ends = END_OF_SUPPORT[major];
  const outOfSupport = major < OLDEST_IN_TABLE || (ends !== undefined && now.toISOString().slice(0, 10) >= ends);
  if (!outOfSupport) return { ...base, status: 'ok', detail: `PostgreSQL ${version}${ends ? ` (supported until ${ends})` : ''}` };
  return {
    ...base,
    status: 'warn',
    detail: `PostgreSQL ${version}: out of community support${ends ? ` since ${ends}` : ''}`,
    risk: 'no more security or data-corruption fixes are released for this version',
    fix: 'upgrade to a supported major version (pg_upgrade, or a dump and restore)',
  };
}
