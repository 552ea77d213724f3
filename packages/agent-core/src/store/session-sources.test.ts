import { describe, expect, it } from 'vitest';
import { CORE_MIGRATIONS, runMigrations } from './migrations.js';
import { openSql } from './session-store.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

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
