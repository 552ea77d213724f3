import { describe, expect, it } from 'vitest';
import { CORE_MIGRATIONS, runMigrations } from './migrations.js';
import { openSql } from './session-store.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';
import type { Sql } from './sql.js';

const BEFORE_WHATSAPP = CORE_MIGRATIONS.filter((m) => m.version < 55);

describe.each(STORE_BACKENDS)('migration 55 (whatsapp session source) on %s', (backend) => {
  const temp = useTempStores(backend);

  it('lets a session come from WhatsApp, keeping the sessions and messages from before', async () => {
    const at = await temp.location();
    const old = await openSql(at);
    await runMigrations(old, BEFORE_WHATSAPP);
    // A database from before: a session, a compressed child of it, and a message.
    await old.run(`INSERT INTO sessions (id, key, source, started_at, profile) VALUES ('s1', 'k1', 'telegram', 1, 'p')`);
    await old.run(`INSERT INTO sessions (id, key, source, started_at, parent_session_id) VALUES ('s2', 'k1', 'telegram', 2, 's1')`);
    await old.run(`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'user', 'hello there', 1)`);
    await expect(old.run(`INSERT INTO sessions (id, key, source, started_at) VALUES ('w0', 'k2', 'whatsapp', 3)`)).rejects.toThrow(/check/i);
    await old.close();

    const store = await temp.open(at);
    const wa = await store.getOrCreateSession('agent:main:whatsapp:dm:15551234567', { source: 'whatsapp' });
    expect(wa.session.source).toBe('whatsapp');
    expect((await store.getMessages('s1')).map((m) => m.content)).toEqual(['hello there']);
    const rows = await store.sql.all<{ id: string; parent_session_id: string | null; profile: string | null }>(
      `SELECT id, parent_session_id, profile FROM sessions WHERE id IN ('s1', 's2') ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: 's1', parent_session_id: null, profile: 'p' },
      { id: 's2', parent_session_id: 's1', profile: null },
    ]);
    // The constraint is still there for anything else.
    await expect(store.sql.run(`INSERT INTO sessions (id, key, source, started_at) VALUES ('x', 'k3', 'nowhere', 4)`)).rejects.toThrow(/check/i);
    // Foreign keys are on again: deleting a session still takes its messages with it.
    await store.sql.run(`DELETE FROM sessions WHERE id = 's2'`);
    await store.sql.run(`DELETE FROM sessions WHERE id = 's1'`);
    expect(await store.getMessages('s1')).toEqual([]);
  });
});

const BEFORE_MATRIX = CORE_MIGRATIONS.filter((m) => m.version < 56);

describe.each(STORE_BACKENDS)('migration 56 (matrix session source) on %s', (backend) => {
  const temp = useTempStores(backend);

  it('lets a session come from Matrix, keeping every column, index and row from before', async () => {
    const at = await temp.location();
    const old = await openSql(at);
    await runMigrations(old, BEFORE_MATRIX);
    await old.run(`INSERT INTO sessions (id, key, source, started_at, profile, total_tokens) VALUES ('s1', 'k1', 'whatsapp', 1, 'p', 42)`);
    await old.run(`INSERT INTO sessions (id, key, source, started_at, parent_session_id) VALUES ('s2', 'k1', 'whatsapp', 2, 's1')`);
    await old.run(`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'user', 'hello there', 1)`);
    await expect(old.run(`INSERT INTO sessions (id, key, source, started_at) VALUES ('m0', 'k2', 'matrix', 3)`)).rejects.toThrow(/check/i);
    const columnsBefore = await columnsOf(old);
    const indexesBefore = await indexesOf(old);
    await old.close();

    const store = await temp.open(at);
    const mx = await store.getOrCreateSession('agent:main:matrix:dm:!room:example.org', { source: 'matrix' });
    expect(mx.session.source).toBe('matrix');
    expect(await columnsOf(store.sql)).toEqual(columnsBefore);
    expect(await indexesOf(store.sql)).toEqual(indexesBefore);
    expect((await store.getMessages('s1')).map((m) => m.content)).toEqual(['hello there']);
    const rows = await store.sql.all<{ id: string; parent_session_id: string | null; profile: string | null; total_tokens: number }>(
      `SELECT id, parent_session_id, profile, total_tokens FROM sessions WHERE id IN ('s1', 's2') ORDER BY id`,
    );
    expect(rows.map((r) => ({ ...r, total_tokens: Number(r.total_tokens) }))).toEqual([
      { id: 's1', parent_session_id: null, profile: 'p', total_tokens: 42 },
      { id: 's2', parent_session_id: 's1', profile: null, total_tokens: 0 },
    ]);
    await expect(store.sql.run(`INSERT INTO sessions (id, key, source, started_at) VALUES ('x', 'k3', 'nowhere', 4)`)).rejects.toThrow(/check/i);
    await store.sql.run(`DELETE FROM sessions WHERE id = 's2'`);
    await store.sql.run(`DELETE FROM sessions WHERE id = 's1'`);
    expect(await store.getMessages('s1')).toEqual([]);
  });
});

async function columnsOf(sql: Sql): Promise<string[]> {
  const rows =
    sql.dialect === 'sqlite'
      ? await sql.all<{ name: string }>('PRAGMA table_info(sessions)')
      : await sql.all<{ name: string }>(
          `SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'sessions' AND table_schema = current_schema() ORDER BY ordinal_position`,
        );
  return rows.map((r) => r.name);
}

async function indexesOf(sql: Sql): Promise<string[]> {
  const rows =
    sql.dialect === 'sqlite'
      ? await sql.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sessions' AND sql IS NOT NULL ORDER BY name`)
      : await sql.all<{ name: string }>(
          `SELECT indexname AS name FROM pg_indexes WHERE tablename = 'sessions' AND schemaname = current_schema() ORDER BY indexname`,
        );
  return rows.map((r) => r.name);
}
