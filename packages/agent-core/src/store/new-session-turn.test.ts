/**
 * A turn begun in a new session (new-session-turn.ts): the session, the key pointing at it, its prompt record and the
 * turn, in one statement on PostgreSQL; the session another turn opened meanwhile is used instead of a second one.
 */
import { describe, expect, it } from 'vitest';
import { FencedOutError } from './errors.js';
import type { SessionStore } from './session-store.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const KEY = 'agent:main:telegram:dm:7';
const INIT = {
  source: 'telegram' as const,
  userId: '7',
  chatId: '7',
  userName: 'Ana',
  model: 'openai:gpt-4.1-mini',
  systemPrompt: 'You are Herald.',
  prompt: { personality: 'concise', layers: [{ name: 'identity', chars: 15 }] },
};

/** Counts the statements the store sends (a transaction's BEGIN and COMMIT included, as two). */
function countStatements(store: SessionStore): () => number {
  let n = 0;
  const { sql } = store;
  const wrap = <F extends (...args: never[]) => unknown>(f: F) =>
    ((...args: Parameters<F>) => {
      n += 1;
      return f.apply(sql, args);
    }) as F;
  const transaction = sql.transaction.bind(sql);
  Object.assign(sql, {
    all: wrap(sql.all),
    get: wrap(sql.get),
    run: wrap(sql.run),
    transaction: <T>(fn: () => Promise<T>) => {
      n += 2;
      return transaction(fn);
    },
  });
  return () => n;
}

async function promptRecordOf(store: SessionStore, sessionId: string) {
  return store.sql.get<{ personality: string | null; layers: string }>('SELECT personality, layers FROM session_prompts WHERE session_id = ?', [sessionId]);
}

describe.each(STORE_BACKENDS)('a turn begun in a new session on %s', (backend) => {
  const temp = useTempStores(backend);

  it('creates the session, points the key at it, records its prompt and begins the turn (one statement on PostgreSQL)', async () => {
    const store = await temp.open();
    const statements = countStatements(store);
    const begun = await store.beginTurnInNewSession('T1', KEY, INIT, 3);
    if (backend === 'postgres') expect(statements()).toBe(1);
    expect(begun.created).toBe(true);
    expect(begun.session).toMatchObject({ key: KEY, source: 'telegram', userId: '7', chatId: '7', model: INIT.model, endedAt: null });
    expect(begun.session.systemPrompt).toBe('You are Herald.');
    expect(begun.turn).toMatchObject({ id: 'T1', sessionId: begun.session.id, status: 'running', fence: 3 });
    expect((await store.currentSession(KEY))?.id).toBe(begun.session.id);
    expect(await store.getTurn('T1')).toMatchObject({ sessionId: begun.session.id, status: 'running' });
    const record = await promptRecordOf(store, begun.session.id);
    expect(record?.personality).toBe('concise');
    expect(JSON.parse(record?.layers ?? 'null')).toEqual(INIT.prompt.layers);
  });

  it('replaces an ended session; the old one stays ended', async () => {
    const store = await temp.open();
    const first = await store.beginTurnInNewSession('T1', KEY, INIT, 1);
    await store.endSession(first.session.id, 'idle');
    const second = await store.beginTurnInNewSession('T2', KEY, { source: 'telegram' }, 1);
    expect(second.created).toBe(true);
    expect(second.session.id).not.toBe(first.session.id);
    expect((await store.currentSession(KEY))?.id).toBe(second.session.id);
    expect((await store.getSession(first.session.id))?.endedAt).not.toBeNull();
    // No prompt given: none recorded.
    expect(await promptRecordOf(store, second.session.id)).toBeUndefined();
  });

  it('begins in the session another turn opened meanwhile: no second session, no second prompt record', async () => {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession(KEY, { source: 'telegram' });
    const begun = await store.beginTurnInNewSession('T1', KEY, INIT, 1);
    expect(begun.created).toBe(false);
    expect(begun.session.id).toBe(session.id);
    expect(begun.turn).toMatchObject({ id: 'T1', sessionId: session.id, status: 'running' });
    expect((await store.listSessions()).sessions).toHaveLength(1);
    expect(await promptRecordOf(store, session.id)).toBeUndefined();
  });

  it('two turns of a new key at once share one session', async () => {
    const store = await temp.open();
    const both = await Promise.all([
      store.beginTurnInNewSession('T1', KEY, INIT, 1),
      store.beginTurnInNewSession('T2', KEY, { ...INIT, prompt: { personality: 'other', layers: [] } }, 1),
    ]);
    expect(both.map((b) => b.created).sort()).toEqual([false, true]);
    expect(both[0].session.id).toBe(both[1].session.id);
    expect((await store.listSessions()).sessions).toHaveLength(1);
    expect((await store.currentSession(KEY))?.id).toBe(both[0].session.id);
    const creator = both.find((b) => b.created);
    expect((await promptRecordOf(store, both[0].session.id))?.personality).toBe(creator === both[0] ? 'concise' : 'other');
  });

  it('a newer fence owning the turn refuses the begin (FencedOutError)', async () => {
    const store = await temp.open();
    const first = await store.beginTurnInNewSession('T1', KEY, INIT, 5);
    await store.endSession(first.session.id, 'idle');
    await expect(store.beginTurnInNewSession('T1', KEY, INIT, 4)).rejects.toBeInstanceOf(FencedOutError);
  });

  it('getOrCreateSession records the prompt it is given with the new session', async () => {
    const store = await temp.open();
    const { session, created } = await store.getOrCreateSession(KEY, INIT);
    expect(created).toBe(true);
    expect((await promptRecordOf(store, session.id))?.personality).toBe('concise');
  });
});
