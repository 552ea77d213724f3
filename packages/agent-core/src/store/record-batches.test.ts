/**
 * Records of turns finishing together (record-batches.ts): on PostgreSQL several go in one statement, each landing as
 * it would on its own; a record that cannot land fails alone. SQLite writes each in its own transaction.
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { FencedOutError } from './errors.js';
import type { SessionStore } from './session-store.js';
import type { SqlValue } from './sql.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';
import type { SqlWrite, WriteMerge } from './turns.js';

const CALL = { id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } };
const turnMessages = (n: number): ChatMessage[] => [
  { role: 'user', content: `question ${n}` },
  { role: 'assistant', content: null, tool_calls: [CALL] },
  { role: 'tool', content: `found ${n}`, tool_call_id: 'c1', tool_name: 'lookup' },
  { role: 'assistant', content: `answer ${n}` },
];
const usage = (n: number) => ({
  input: 100 + n,
  output: 20,
  cacheRead: 30,
  cacheWrite: 5,
  costUsd: 0.25,
  actualCostUsd: 0.5,
  lastPromptTokens: 140 + n,
  apiCalls: 2,
});

/** A write alongside that adds to a tally, and how several of them become one (PostgreSQL's merged upsert). */
const TALLY_SQL = 'INSERT INTO tally (name, n) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET n = tally.n + excluded.n';
const TALLY_MANY_SQL = `INSERT INTO tally (name, n) SELECT name, sum(n) FROM json_to_recordset(?::json) AS x(name text, n bigint)
  GROUP BY name ORDER BY name ON CONFLICT (name) DO UPDATE SET n = tally.n + excluded.n`;
function tallies() {
  const merged: number[] = [];
  const merge: WriteMerge = {
    key: 'tally',
    merge: (writes) => {
      merged.push(writes.length);
      return { sql: TALLY_MANY_SQL, params: [JSON.stringify(writes.map((w) => ({ name: w.params[0], n: w.params[1] })))] };
    },
  };
  return { merged, add: (name: string, n: number): SqlWrite => ({ sql: TALLY_SQL, params: [name, n], merge }) };
}

/** The records' statements the store sends, as sent. */
function watchRecords(store: SessionStore): string[] {
  const sent: string[] = [];
  const { sql } = store;
  const get = sql.get.bind(sql);
  Object.assign(sql, {
    get: (text: string, params?: readonly SqlValue[]) => {
      if (text.includes("status = 'replied'")) sent.push(text);
      return get(text, params as never);
    },
  });
  return sent;
}

describe.each(STORE_BACKENDS)('records of turns finishing together on %s', (backend) => {
  const temp = useTempStores(backend);

  /** `n` sessions, each with a running turn T<i> under fence 1. */
  async function running(n: number) {
    const store = await temp.open();
    await store.sql.run('CREATE TABLE tally (name TEXT PRIMARY KEY, n BIGINT NOT NULL)');
    const sessions: string[] = [];
    for (let i = 0; i < n; i++) {
      const { session } = await store.getOrCreateSession(`agent:main:telegram:dm:${i}`, { source: 'telegram' });
      await store.beginTurn(`T${i}`, session.id, 1);
      sessions.push(session.id);
    }
    return { store, sessions };
  }

  const record = (store: SessionStore, sessionId: string, i: number, alongside: SqlWrite[], fence = 1) =>
    store.recordTurn({
      turnId: `T${i}`,
      fence,
      sessionId,
      messages: turnMessages(i),
      platformMessageId: `tg-${i}`,
      usage: usage(i),
      reply: `answer ${i}`,
      claim: i % 2 === 0,
      alongside,
    });

  it('each lands as on its own: reply, messages in order, counts and usage, the writes alongside (merged on PostgreSQL)', async () => {
    const { store, sessions } = await running(8);
    const tally = tallies();
    const sent = watchRecords(store);
    const turns = await Promise.all(sessions.map((id, i) => record(store, id, i, [tally.add('all', 1), tally.add(`own-${i}`, i + 1)])));
    for (const [i, sessionId] of sessions.entries()) {
      expect(turns[i]).toEqual(await store.getTurn(`T${i}`));
      expect(turns[i]).toMatchObject({ id: `T${i}`, status: 'replied', reply: `answer ${i}`, fence: 1, sendAttempts: i % 2 === 0 ? 1 : 0, fileCount: 0 });
      expect(await store.getHistory(sessionId)).toEqual(turnMessages(i));
      expect((await store.getMessages(sessionId)).map((m) => [m.turnId, m.seq, m.platformMessageId])).toEqual(
        [0, 1, 2, 3].map((seq) => [`T${i}`, seq, `tg-${i}`]),
      );
      const s = (await store.getSession(sessionId))!;
      expect([
        s.messageCount,
        s.toolCallCount,
        s.inputTokens,
        s.outputTokens,
        s.cacheReadTokens,
        s.cacheWriteTokens,
        s.totalTokens,
        s.lastPromptTokens,
      ]).toEqual([4, 1, 100 + i, 20, 30, 5, 155 + i, 140 + i]);
      expect(Number((await store.sql.get<{ n: number | string }>('SELECT api_calls AS n FROM sessions WHERE id = ?', [sessionId]))?.n)).toBe(2);
      expect([s.estimatedCostUsd, s.actualCostUsd]).toEqual([0.25, 0.5]);
    }
    const tallied = await store.sql.all<{ name: string; n: number | string }>('SELECT name, n FROM tally ORDER BY name');
    expect(tallied.map((r) => [r.name, Number(r.n)])).toEqual([['all', 8], ...sessions.map((_, i) => [`own-${i}`, i + 1])]);
    if (backend === 'postgres') {
      // The first went alone; those that came while it was written went together, their tallies merged.
      expect(sent.length).toBeLessThan(sessions.length);
      expect(sent.some((text) => text.includes('json_to_recordset'))).toBe(true);
      expect(tally.merged.some((n) => n > 2)).toBe(true);
    } else expect(sent.length).toBe(sessions.length); // SQLite: each record in its own transaction
  });

  it('a record whose fence was lost fails alone; the others written with it land', async () => {
    const { store, sessions } = await running(5);
    await store.beginTurn('T2', sessions[2], 2); // another worker took T2 over
    const tally = tallies();
    const outcomes = await Promise.allSettled(sessions.map((id, i) => record(store, id, i, [tally.add('all', 1)])));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(outcomes[2].status === 'rejected' && outcomes[2].reason).toBeInstanceOf(FencedOutError);
    expect(await store.getHistory(sessions[2])).toEqual([]);
    expect((await store.getSession(sessions[2]))!.inputTokens).toBe(0);
    for (const i of [0, 1, 3, 4]) expect(await store.getHistory(sessions[i])).toEqual(turnMessages(i));
    expect(Number((await store.sql.get<{ n: number | string }>('SELECT n FROM tally WHERE name = ?', ['all']))?.n)).toBe(4);
  });

  it('a record with a write that cannot be merged is written on its own, beside the others', async () => {
    const { store, sessions } = await running(4);
    const tally = tallies();
    const plain: SqlWrite = { sql: TALLY_SQL, params: ['plain', 10] };
    await Promise.all(sessions.map((id, i) => record(store, id, i, i === 1 ? [plain] : [tally.add('all', 1)])));
    const tallied = await store.sql.all<{ name: string; n: number | string }>('SELECT name, n FROM tally ORDER BY name');
    expect(tallied.map((r) => [r.name, Number(r.n)])).toEqual([
      ['all', 3],
      ['plain', 10],
    ]);
    for (const [i, id] of sessions.entries()) expect(await store.getHistory(id)).toEqual(turnMessages(i));
  });
});
