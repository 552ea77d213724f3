import { afterEach, describe, expect, it } from 'vitest';
import { StoreDb } from './db.js';
import { CORE_MIGRATIONS, allMigrations, appliedVersions, registerMigrations, runMigrations, type Migration } from './migrations.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores();
const dbs: StoreDb[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function openDb(file = temp.file()): StoreDb {
  const db = StoreDb.open(file);
  dbs.push(db);
  return db;
}

function tables(db: StoreDb): string[] {
  return db.raw.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table') ORDER BY name`).pluck().all() as string[];
}

describe('migrations', () => {
  it('creates the whole schema on a fresh file and records the version', () => {
    const db = openDb();
    expect(runMigrations(db)).toEqual([1]);
    expect(tables(db)).toEqual(
      expect.arrayContaining(['sessions', 'messages', 'messages_fts', 'session_keys', 'turns', 'known_threads']),
    );
    expect(db.raw.pragma('user_version', { simple: true })).toBe(1);
    expect(appliedVersions(db)).toEqual([1]);
  });

  it('does not re-apply anything when the same file is opened again', () => {
    const file = temp.file();
    temp.open(file).close();
    const db = openDb(file);
    expect(runMigrations(db)).toEqual([]);
    // Data written between opens survives a re-open (a re-applied schema would have failed or wiped it).
    const store = temp.open(file);
    const { session } = store.getOrCreateSession('k', { source: 'cli' });
    store.close();
    const again = temp.open(file);
    expect(again.getOrCreateSession('k', { source: 'cli' })).toEqual({ session, created: false });
  });

  it('applies a migration added later even when its number is below one already applied', () => {
    const db = openDb();
    const external: Migration = { version: 100, name: 'plugin table', sql: 'CREATE TABLE plugin (v)' };
    expect(runMigrations(db, [...CORE_MIGRATIONS, external])).toEqual([1, 100]);
    const laterCore: Migration = { version: 2, name: 'later core', sql: 'CREATE TABLE later (v)' };
    expect(runMigrations(db, [...CORE_MIGRATIONS, laterCore, external])).toEqual([2]);
    expect(tables(db)).toEqual(expect.arrayContaining(['plugin', 'later']));
    expect(db.raw.pragma('user_version', { simple: true })).toBe(100);
  });

  it('rolls a failing migration back entirely and applies it on the next open once fixed', () => {
    const db = openDb();
    const broken: Migration = { version: 101, name: 'broken', sql: 'CREATE TABLE half (v); SELECT * FROM nowhere;' };
    expect(() => runMigrations(db, [...CORE_MIGRATIONS, broken])).toThrow(/nowhere/);
    expect(tables(db)).not.toContain('half');
    expect(appliedVersions(db)).toEqual([1]);
    const fixed: Migration = { ...broken, sql: 'CREATE TABLE half (v);' };
    expect(runMigrations(db, [...CORE_MIGRATIONS, fixed])).toEqual([101]);
  });

  it('lets other modules register migrations that every store opened afterwards applies once', () => {
    const extra: Migration = {
      version: 150,
      name: 'gateway audit log',
      sql: `CREATE TABLE audit_log (entry TEXT); INSERT INTO audit_log (entry) VALUES ('created');`,
    };
    registerMigrations(extra);
    registerMigrations(extra); // importing a module twice is harmless
    expect(allMigrations().map((m) => m.version)).toEqual([1, 150]);

    const file = temp.file();
    temp.open(file).close();
    temp.open(file).close();
    const db = openDb(file);
    expect(db.raw.prepare('SELECT entry FROM audit_log').pluck().all()).toEqual(['created']);
  });

  it('refuses registrations that would clash with core or with each other', () => {
    expect(() => registerMigrations({ version: 5, name: 'too low', sql: '' })).toThrow(RangeError);
    registerMigrations({ version: 200, name: 'a', sql: 'CREATE TABLE a (v)' });
    expect(() => registerMigrations({ version: 200, name: 'b', sql: 'CREATE TABLE b (v)' })).toThrow(/already registered/);
  });
});
