import { afterEach, describe, expect, it } from 'vitest';
import { CORE_MIGRATIONS, allMigrations, appliedVersions, registerMigrations, runMigrations, type Migration } from './migrations.js';
import { openSql, SessionStore } from './session-store.js';
import type { Sql } from './sql.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';
import { TURN_FILES_MIGRATION_VERSION } from './turn-files.js';

/** The store's own versions, whatever later core migrations add. */
const CORE = CORE_MIGRATIONS.map((m) => m.version);

describe.each(STORE_BACKENDS)('migrations on %s', (backend) => {
  const temp = useTempStores(backend);
  const conns: Sql[] = [];
  afterEach(async () => {
    for (const sql of conns.splice(0)) await sql.close();
  });

  async function openDb(at?: string): Promise<Sql> {
    const sql = await openSql(at ?? (await temp.location()));
    conns.push(sql);
    return sql;
  }

  async function tables(sql: Sql): Promise<string[]> {
    const rows =
      sql.dialect === 'sqlite'
        ? await sql.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
        : await sql.all<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`);
    return rows.map((r) => r.name);
  }

  it('creates the whole schema on a fresh database and records the version', async () => {
    const db = await openDb();
    expect(await runMigrations(db, CORE_MIGRATIONS)).toEqual(CORE);
    expect(await tables(db)).toEqual(expect.arrayContaining(['sessions', 'messages', 'session_keys', 'turns', 'known_threads']));
    if (backend === 'sqlite') {
      expect(await tables(db)).toContain('messages_fts');
      expect(await db.get('PRAGMA user_version')).toEqual({ user_version: Math.max(...CORE) });
    } else {
      const index = await db.get<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'messages_fts' AND schemaname = current_schema()`);
      expect(index?.indexdef).toMatch(/USING gin .*to_tsvector/);
    }
    expect(await appliedVersions(db)).toEqual(CORE);
  });

  it('does not re-apply anything when the same database is opened again', async () => {
    const at = await temp.location();
    await (await temp.open(at)).close();
    const db = await openDb(at);
    expect(await runMigrations(db)).toEqual([]);
    // Data written between opens survives a re-open (a re-applied schema would have failed or wiped it).
    const store = await SessionStore.open(at);
    const { session } = await store.getOrCreateSession('k', { source: 'cli' });
    await store.close();
    const again = await temp.open(at);
    expect(await again.getOrCreateSession('k', { source: 'cli' })).toEqual({ session, created: false });
  });

  it('applies a migration added later even when its number is below one already applied', async () => {
    const db = await openDb();
    const external: Migration = { version: 100, name: 'plugin table', sql: 'CREATE TABLE plugin (v INTEGER)' };
    expect(await runMigrations(db, [...CORE_MIGRATIONS, external])).toEqual([...CORE, 100]);
    const laterCore: Migration = { version: 4, name: 'later core', sql: 'CREATE TABLE later (v INTEGER)' };
    expect(await runMigrations(db, [...CORE_MIGRATIONS, laterCore, external])).toEqual([4]);
    expect(await tables(db)).toEqual(expect.arrayContaining(['plugin', 'later']));
    if (backend === 'sqlite') expect(await db.get('PRAGMA user_version')).toEqual({ user_version: 100 });
  });

  it('rolls a failing migration back entirely and applies it on the next open once fixed', async () => {
    const db = await openDb();
    await runMigrations(db, CORE_MIGRATIONS);
    const broken: Migration = { version: 101, name: 'broken', sql: 'CREATE TABLE half (v INTEGER); SELECT * FROM nowhere;' };
    await expect(runMigrations(db, [...CORE_MIGRATIONS, broken])).rejects.toThrow(/nowhere/);
    expect(await tables(db)).not.toContain('half');
    expect(await appliedVersions(db)).toEqual(CORE);
    const fixed: Migration = { ...broken, sql: 'CREATE TABLE half (v INTEGER);' };
    expect(await runMigrations(db, [...CORE_MIGRATIONS, fixed])).toEqual([101]);
  });

  it('applies each step exactly once when several processes start at the same moment', async () => {
    const at = await temp.location();
    const counted: Migration = { version: 102, name: 'counted', sql: `CREATE TABLE counted (v INTEGER); INSERT INTO counted (v) VALUES (1);` };
    const starters = await Promise.all(Array.from({ length: 4 }, () => openDb(at)));
    const applied = await Promise.all(starters.map((db) => runMigrations(db, [...CORE_MIGRATIONS, counted])));
    expect(applied.flat().sort((a, b) => a - b)).toEqual([...CORE, 102]);
    expect(await starters[0].all('SELECT v FROM counted')).toEqual([{ v: 1 }]);
  });

  it('gives one migration a text per database when portable DDL is not enough', async () => {
    const db = await openDb();
    const split: Migration = {
      version: 103,
      name: 'per database',
      sql: {
        sqlite: `CREATE TABLE which (v TEXT); INSERT INTO which VALUES ('sqlite');`,
        postgres: `CREATE TABLE which (v TEXT); INSERT INTO which VALUES ('postgres');`,
      },
    };
    await runMigrations(db, [...CORE_MIGRATIONS, split]);
    expect(await db.all('SELECT v FROM which')).toEqual([{ v: backend }]);
  });
});

describe('registered migrations', () => {
  const temp = useTempStores('sqlite');

  it('lets other modules register migrations that every store opened afterwards applies once', async () => {
    const extra: Migration = {
      version: 150,
      name: 'gateway audit log',
      sql: `CREATE TABLE audit_log (entry TEXT); INSERT INTO audit_log (entry) VALUES ('created');`,
    };
    registerMigrations(extra);
    registerMigrations(extra); // importing a module twice is harmless
    // The store's own registered step (the outbox's files, turn-files.ts) is there from the start.
    expect(allMigrations().map((m) => m.version)).toEqual([...CORE, 150, TURN_FILES_MIGRATION_VERSION]);

    const at = await temp.location();
    await (await temp.open(at)).close();
    const store = await temp.open(at);
    expect(await store.sql.all('SELECT entry FROM audit_log')).toEqual([{ entry: 'created' }]);
  });

  it('refuses registrations that would clash with core or with each other', () => {
    expect(() => registerMigrations({ version: 5, name: 'too low', sql: '' })).toThrow(RangeError);
    registerMigrations({ version: 200, name: 'a', sql: 'CREATE TABLE a (v INTEGER)' });
    expect(() => registerMigrations({ version: 200, name: 'b', sql: 'CREATE TABLE b (v INTEGER)' })).toThrow(/already registered/);
  });
});
