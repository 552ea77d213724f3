/**
 * The SQLite search index written in batches (schema.ts SEARCH_INDEX_IN_BATCHES, fts.ts indexNewMessages): new
 * messages wait for a batch, a search catches up first, a message deleted or edited before it was indexed leaves
 * the index consistent, and a database indexed by the old per-insert trigger carries on where it was.
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { catchUpSearchIndex, indexNewMessages } from './fts.js';
import { CORE_MIGRATIONS, runMigrations } from './migrations.js';
import { SessionStore } from './session-store.js';
import { SqliteSql } from './sqlite-sql.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores('sqlite');
const user = (content: string): ChatMessage => ({ role: 'user', content });

/** Messages the index holds (FTS5 keeps one docsize row per indexed document). */
const indexed = async (store: SessionStore): Promise<number> => (await store.sql.get<{ n: number }>('SELECT count(*) AS n FROM messages_fts_docsize'))!.n;
const upto = async (store: SessionStore): Promise<number> =>
  (await store.sql.get<{ n: number }>(`SELECT indexed_upto AS n FROM search_index_progress WHERE name = 'messages'`))!.n;
/** FTS5's own check that an external-content index agrees with its table; throws when it does not. */
const integrityCheck = (store: SessionStore): Promise<unknown> => store.sql.run(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`);

describe('the search index, written in batches', () => {
  it('leaves new messages out until a batch adds them, oldest first, at most the batch size at a time', async () => {
    const store = await temp.open();
    const s = await store.startNewSession('k', { source: 'cli' });
    await store.appendMessages(s.id, ['one apple', 'two apples', 'three pears', 'four plums', 'five figs'].map(user));
    expect(await indexed(store)).toBe(0);
    expect(await indexNewMessages(store.sql, 2)).toBe(2);
    expect(await indexNewMessages(store.sql, 2)).toBe(2);
    expect(await indexed(store)).toBe(4);
    expect(await indexNewMessages(store.sql, 2)).toBe(1);
    expect(await indexNewMessages(store.sql, 2)).toBe(0);
    const messages = await store.getMessages(s.id);
    expect(await upto(store)).toBe(messages[messages.length - 1].id);
    await expect(integrityCheck(store)).resolves.toBeDefined();
  });

  it('catches up before every search, so a search never misses a message just written', async () => {
    const store = await temp.open();
    const s = await store.startNewSession('k', { source: 'cli' });
    await store.appendMessages(s.id, [user('the deploy script broke')]);
    expect((await store.search('deploy')).map((h) => h.snippet)).toEqual(['the >>>deploy<<< script broke']);
    await store.appendMessages(s.id, [user('deploy again tomorrow')]);
    expect(await store.search('deploy')).toHaveLength(2);
    expect(await indexed(store)).toBe(2);
  });

  it('keeps the index consistent when a message is deleted or edited before or after it was indexed', async () => {
    const store = await temp.open();
    const s = await store.startNewSession('k', { source: 'cli' });
    await store.appendMessages(s.id, [user('alpha kept'), user('beta edited'), user('gamma removed')]);
    expect(await catchUpSearchIndex(store.sql)).toBe(3);
    await store.appendMessages(s.id, [user('delta edited early'), user('epsilon removed early')]);
    // Indexed ones: the triggers take them out or change them in the index.
    await store.sql.run(`UPDATE messages SET content = 'beta changed' WHERE content = 'beta edited'`);
    await store.sql.run(`DELETE FROM messages WHERE content = 'gamma removed'`);
    // Not indexed yet: nothing to take out; the batch indexes them as they are now.
    await store.sql.run(`UPDATE messages SET content = 'delta changed' WHERE content = 'delta edited early'`);
    await store.sql.run(`DELETE FROM messages WHERE content = 'epsilon removed early'`);
    await expect(integrityCheck(store)).resolves.toBeDefined();
    expect((await store.search('changed')).map((h) => h.snippet).sort()).toEqual(['beta >>>changed<<<', 'delta >>>changed<<<']);
    expect(await store.search('edited')).toEqual([]);
    expect(await store.search('removed')).toEqual([]);
    expect(await indexed(store)).toBe(3);
    await expect(integrityCheck(store)).resolves.toBeDefined();
  });

  it('never indexes a message twice when two connections catch up at once', async () => {
    const file = await temp.location();
    const a = await temp.open(file);
    const b = await temp.open(file);
    const s = await a.startNewSession('k', { source: 'cli' });
    await a.appendMessages(
      s.id,
      Array.from({ length: 250 }, (_, i) => user(`message ${i} about shared work`)),
    );
    const [fromA, fromB] = await Promise.all([
      (async () => (await indexNewMessages(a.sql, 40)) + (await catchUpSearchIndex(a.sql)))(),
      (async () => (await indexNewMessages(b.sql, 40)) + (await catchUpSearchIndex(b.sql)))(),
    ]);
    expect(fromA + fromB).toBe(250);
    expect(await indexed(a)).toBe(250);
    await expect(integrityCheck(a)).resolves.toBeDefined();
  });

  it('is indexed on a timer when the store is opened for the gateway', async () => {
    const store = await SessionStore.open(await temp.location(), { backgroundSearchIndex: true });
    try {
      const s = await store.startNewSession('k', { source: 'cli' });
      await store.appendMessages(s.id, [user('first'), user('second')]);
      await expect.poll(() => indexed(store), { timeout: 15_000 }).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('carries on from a database the per-message trigger indexed: everything in it stays searchable', async () => {
    const file = await temp.location();
    // The schema as it was before the batches (migrations up to 3), messages indexed by the old trigger.
    const old = await SqliteSql.open(file);
    await runMigrations(
      old,
      CORE_MIGRATIONS.filter((m) => m.version < 5),
    );
    await old.run(`INSERT INTO sessions (id, key, source, started_at) VALUES ('s1', 'k', 'cli', 1)`);
    for (const text of ['older words', 'old deploy notes'])
      await old.run(`INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'user', ?, 1)`, [text]);
    await old.close();

    const store = await temp.open(file);
    expect(await upto(store)).toBe(2);
    expect(await indexed(store)).toBe(2);
    await store.appendMessages('s1', [user('new deploy notes')]);
    expect(await store.search('deploy')).toHaveLength(2);
    await store.sql.run(`DELETE FROM messages WHERE content = 'old deploy notes'`);
    expect((await store.search('deploy')).map((h) => h.snippet)).toEqual(['new >>>deploy<<< notes']);
    await expect(integrityCheck(store)).resolves.toBeDefined();
  });
});
