/**
 * Shared by the store's tests (not exported from the package): stores on real databases, closed after each test.
 *   sqlite:   WAL files in a temp directory per test file, removed after the file;
 *   postgres: a fresh schema per store on the test database (HERALD_TEST_DATABASE_URL, default
 *             postgres://postgres@127.0.0.1:5432/test), dropped after the file.
 * `STORE_BACKENDS` lets a contract test run once per backend with `describe.each`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach } from 'vitest';
import { SessionStore } from './session-store.js';
import type { Dialect } from './sql.js';

export const STORE_BACKENDS: readonly Dialect[] = ['sqlite', 'postgres'];

export const TEST_DATABASE_URL = process.env.HERALD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** `url` with its connections' search_path set to `schema` (pg passes `options` to the server). */
export function urlWithSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Creates a fresh, uniquely named schema and returns a URL whose connections use it. */
export async function freshPostgresSchema(prefix = 'herald_t'): Promise<{ url: string; schema: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  return {
    url: urlWithSchema(TEST_DATABASE_URL, schema),
    schema,
    async drop() {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface TempStores {
  readonly backend: Dialect;
  /** SQLite: the temp directory. */
  dir: string;
  /** A fresh location: a file path (SQLite) or a URL on a fresh schema (PostgreSQL). */
  location(name?: string): Promise<string>;
  /** A store on a fresh (or the given) location, closed after the current test. */
  open(location?: string): Promise<SessionStore>;
}

export function useTempStores(backend: Dialect = 'sqlite'): TempStores {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-store-'));
  const opened: SessionStore[] = [];
  const schemas: Array<() => Promise<void>> = [];
  let counter = 0;
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    for (const drop of schemas.splice(0)) await drop();
  });
  const location = async (name?: string): Promise<string> => {
    if (backend === 'sqlite') return path.join(dir, name ?? `store-${++counter}.db`);
    const fresh = await freshPostgresSchema();
    schemas.push(fresh.drop);
    return fresh.url;
  };
  return {
    backend,
    dir,
    location,
    async open(at?: string): Promise<SessionStore> {
      const store = await SessionStore.open(at ?? (await location()));
      opened.push(store);
      return store;
    },
  };
}
