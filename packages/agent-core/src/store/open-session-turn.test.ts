/**
 * Turns beginning together in their keys' open sessions (open-session-turn.ts): on PostgreSQL several begins go in one
 * statement, each answered as it would be alone (begun with its transcript and notes, no open session, expired, a
 * newer fence); SQLite begins each in its own statements.
 */
import { describe, expect, it } from 'vitest';
import '../builtins/tables.js'; // the memory tool's notes, read with a begin
import { FencedOutError } from './errors.js';
import type { SessionStore } from './session-store.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const key = (i: number): string => `agent:main:telegram:dm:${i}`;

/** The begins' statements the store sends (each reads the key's open session). */
function watchBegins(store: SessionStore): string[] {
  const sent: string[] = [];
  const { sql } = store;
  const all = sql.all.bind(sql);
  Object.assign(sql, {
    all: (text: string, params?: never) => {
      if (text.includes('last_activity') && text.includes('INSERT INTO turns')) sent.push(text);
      return all(text, params);
    },
  });
  return sent;
}

describe.each(STORE_BACKENDS)('turns beginning together on %s', (backend) => {
  const temp = useTempStores(backend);

  it('each is answered as alone: begun with its transcript and notes, none open, expired, fenced out', async () => {
    const store = await temp.open();
    const sessions: string[] = [];
    for (let i = 0; i < 8; i++) sessions.push((await store.getOrCreateSession(key(i), { source: 'telegram', userId: String(i) })).session.id);
    // 0: a transcript, and what an earlier run of T0 saved; 1: no session; 2: ended; 3: last active long ago;
    // 4: T4 owned by a newer fence; 5: notes of its person; 6, 7: fresh.
    await store.appendMessages(
      sessions[0],
      [
        { role: 'user', content: 'before' },
        { role: 'assistant', content: 'answer' },
      ],
      { turnId: 'T-old' },
    );
    await store.appendMessages(sessions[0], [{ role: 'user', content: 'again' }], { turnId: 'T0' });
    await store.endSession(sessions[2], 'session_reset');
    await store.beginTurn('T4', sessions[4], 5);
    await store.sql.run('INSERT INTO tool_memory (user_key, target, content, created_at, updated_at) VALUES (?, ?, ?, 1, 1)', [
      'telegram:5',
      'user',
      'Name: Eve',
    ]);
    const started3 = (await store.getSession(sessions[3]))?.startedAt as number;
    const sent = watchBegins(store);

    const outcomes = await Promise.allSettled(
      [0, 1, 2, 3, 4, 5, 6, 7].map((i) => store.beginTurnInOpenSession(`T${i}`, key(i === 1 ? 99 : i), 1, `telegram:${i}`, i === 3 ? started3 + 1 : null)),
    );
    const [t0, none, ended, expired, fenced, t5, t6, t7] = outcomes.map((o) => (o.status === 'fulfilled' ? o.value : o.reason));
    expect(t0).toMatchObject({ session: { id: sessions[0] }, turn: { id: 'T0', sessionId: sessions[0], status: 'running', fence: 1 } });
    expect(t0.turn).toEqual(await store.getTurn('T0'));
    expect([none, ended]).toEqual([null, null]);
    expect(expired).toEqual({ expired: await store.getSession(sessions[3]), lastActivity: started3 });
    expect(await store.getTurn('T3')).toBeNull();
    expect(fenced).toBeInstanceOf(FencedOutError);
    expect((await store.getTurn('T4'))?.fence).toBe(5);
    for (const [i, opened] of [t5, t6, t7].entries())
      expect(opened).toMatchObject({ session: { id: sessions[i + 5] }, turn: { id: `T${i + 5}`, status: 'running' } });
    if (backend === 'postgres') {
      expect(t0.history).toEqual(await store.getTurnHistory(sessions[0], 'T0'));
      expect(t0.history.saved.map((m: { content: string }) => m.content)).toEqual(['again']);
      expect(t6.history).toEqual({ history: [], saved: [] });
      expect(t5.notes).toEqual({ userKey: 'telegram:5', entries: [['user', 'Name: Eve']] });
      expect(t6.notes).toEqual({ userKey: 'telegram:6', entries: [] });
      // The first went alone; those that came while it ran went together.
      expect(sent.length).toBeLessThan(8);
      expect(sent.some((text) => text.includes('json_to_recordset'))).toBe(true);
    } else {
      expect([t0.history, t5.notes]).toEqual([undefined, undefined]); // SQLite reads them in-process, later
      expect(sent).toEqual([]);
    }
  });

  it('begins without notes share a statement as well, and a turn begun twice at once is begun once per fence', async () => {
    const store = await temp.open();
    for (let i = 0; i < 4; i++) await store.getOrCreateSession(key(i), { source: 'telegram' });
    const sent = watchBegins(store);
    const opened = await Promise.all([0, 1, 2, 3].map((i) => store.beginTurnInOpenSession(`T${i}`, key(i), 1)));
    expect(opened.map((o) => o?.turn.id)).toEqual(['T0', 'T1', 'T2', 'T3']);
    // The same key twice: one waits for the next statement, and takes the turn over under its newer fence.
    const [a, b] = await Promise.all([store.beginTurnInOpenSession('T0', key(0), 2), store.beginTurnInOpenSession('T0', key(0), 3)]);
    expect([a?.turn.fence, b?.turn.fence]).toEqual([2, 3]);
    if (backend === 'postgres') expect(sent.length).toBeLessThan(6);
  });

  it('a statement of several that the server refuses is run again begin by begin', async () => {
    const store = await temp.open();
    for (let i = 0; i < 3; i++) await store.getOrCreateSession(key(i), { source: 'telegram' });
    const sent = watchBegins(store);
    // One turn id under two keys: in one statement its insert would touch its row twice, which PostgreSQL refuses.
    const outcomes = await Promise.allSettled([
      store.beginTurnInOpenSession('T-first', key(0), 1),
      store.beginTurnInOpenSession('T-twice', key(1), 1),
      store.beginTurnInOpenSession('T-twice', key(2), 1),
    ]);
    expect(outcomes.map((o) => o.status === 'fulfilled' && o.value?.turn.id)).toEqual(['T-first', 'T-twice', 'T-twice']);
    // The first alone, the two together (refused), then each alone.
    if (backend === 'postgres') expect(sent.map((text) => text.includes('json_to_recordset'))).toEqual([false, true, false, false]);
  });
});
