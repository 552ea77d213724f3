/** The turn outbox's record of a finished turn (store/turns.ts, `recordTurn`); the rest of it is in turns.test.ts. */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { FencedOutError, StoreNotFoundError } from './errors.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const KEY = 'agent:main:telegram:dm:7';
const CALL = { id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } };
const TURN: ChatMessage[] = [
  { role: 'user', content: 'look it up' },
  { role: 'assistant', content: null, tool_calls: [CALL] },
  { role: 'tool', content: 'found', tool_call_id: 'c1', tool_name: 'lookup' },
  { role: 'assistant', content: 'It is there.' },
];
const USAGE = { input: 100, output: 20, cacheRead: 30, cacheWrite: 5, costUsd: 0.25, lastPromptTokens: 140, apiCalls: 2 };
/** A write that commits with the record (the gateway passes the budgets' spend): a known thread, readable back. */
const thread = (id: string) => ({
  sql: 'INSERT INTO known_threads (platform, thread_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  params: ['telegram', id, 1],
});

describe.each(STORE_BACKENDS)("a turn's record in one call on %s", (backend) => {
  const temp = useTempStores(backend);

  async function running(turnId: string, fence: number) {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession(KEY, { source: 'telegram' });
    await store.beginTurn(turnId, session.id, fence);
    return { store, sessionId: session.id };
  }

  it('writes the messages, the counts and usage, the writes alongside and the claimed reply together', async () => {
    const { store, sessionId } = await running('T1', 4);
    const turn = await store.recordTurn({
      turnId: 'T1',
      fence: 4,
      sessionId,
      messages: TURN,
      platformMessageId: 'tg-9',
      usage: USAGE,
      reply: 'It is there.',
      claim: true,
      alongside: [thread('th-1')],
    });
    expect(turn).toEqual(await store.getTurn('T1'));
    expect(turn).toMatchObject({ status: 'replied', reply: 'It is there.', fence: 4, sendAttempts: 1, fileCount: 0 });
    expect(await store.getHistory(sessionId)).toEqual(TURN);
    expect((await store.getMessages(sessionId)).map((m) => [m.turnId, m.seq, m.platformMessageId])).toEqual(TURN.map((_, i) => ['T1', i, 'tg-9']));
    const s = (await store.getSession(sessionId))!;
    expect([s.messageCount, s.toolCallCount, s.inputTokens, s.outputTokens, s.cacheReadTokens, s.cacheWriteTokens, s.lastPromptTokens]).toEqual([
      4, 1, 100, 20, 30, 5, 140,
    ]);
    expect(s.estimatedCostUsd).toBeCloseTo(0.25);
    expect(await store.isKnownThread('telegram', 'th-1')).toBe(true);
  });

  it('a re-run records again without storing its messages twice; unclaimed, nothing is counted as sent', async () => {
    const { store, sessionId } = await running('T1', 1);
    const rec = { turnId: 'T1', fence: 1, sessionId, messages: TURN, usage: USAGE, reply: 'first', claim: false, alongside: [] };
    await store.recordTurn(rec);
    await store.beginTurn('T1', sessionId, 2);
    await store.markTurn('T1', 'running', 2);
    const again = await store.recordTurn({ ...rec, fence: 2, reply: 'second' });
    expect(again).toMatchObject({ status: 'replied', reply: 'second', sendAttempts: 0 });
    expect(await store.getHistory(sessionId)).toEqual(TURN);
    expect((await store.getSession(sessionId))!.messageCount).toBe(4);
  });

  it('a fenced-out worker writes nothing: no messages, no usage, nothing alongside', async () => {
    const { store, sessionId } = await running('T1', 1);
    await store.beginTurn('T1', sessionId, 2); // another worker took the turn over
    const rec = { turnId: 'T1', fence: 1, sessionId, messages: TURN, usage: USAGE, reply: 'stale', claim: true, alongside: [thread('th-stale')] };
    await expect(store.recordTurn(rec)).rejects.toBeInstanceOf(FencedOutError);
    expect(await store.getHistory(sessionId)).toEqual([]);
    const s = (await store.getSession(sessionId))!;
    expect([s.messageCount, s.inputTokens]).toEqual([0, 0]);
    expect(await store.isKnownThread('telegram', 'th-stale')).toBe(false);
    expect(await store.getTurn('T1')).toMatchObject({ status: 'running', fence: 2, reply: null });
    // A turn that is not running any more (delivered) takes no second reply either.
    await store.markTurn('T1', 'interrupted', 2, 'stopped');
    await expect(store.recordTurn({ ...rec, fence: 2 })).rejects.toBeInstanceOf(FencedOutError);
  });

  it('refuses an unknown turn or session with a typed error and writes nothing', async () => {
    const { store, sessionId } = await running('T1', 1);
    const rec = { turnId: 'nope', fence: 1, sessionId, messages: TURN, usage: USAGE, reply: 'x', claim: false, alongside: [] };
    await expect(store.recordTurn(rec)).rejects.toBeInstanceOf(StoreNotFoundError);
    await expect(store.recordTurn({ ...rec, turnId: 'T1', sessionId: 'no-such-session' })).rejects.toBeInstanceOf(StoreNotFoundError);
    expect(await store.getHistory(sessionId)).toEqual([]);
    expect((await store.getTurn('T1'))?.status).toBe('running');
  });

  it('with files, a reply made inside the record or messages stored elsewhere: the same all-or-nothing record', async () => {
    const { store, sessionId } = await running('T1', 1);
    const file = { kind: 'file' as const, name: 'a.txt', mimeType: 'text/plain', data: Buffer.from('hi') };
    const seen: boolean[] = [];
    const turn = await store.recordTurn({
      turnId: 'T1',
      fence: 1,
      sessionId,
      messages: TURN,
      usage: USAGE,
      // Made after the writes alongside, in the same transaction: it reads what they wrote.
      reply: async () => {
        seen.push(await store.isKnownThread('telegram', 'th-2'));
        return 'It is there.\n\nnotice';
      },
      claim: true,
      alongside: [thread('th-2')],
      files: [file],
    });
    expect(seen).toEqual([true]);
    expect(turn).toMatchObject({ status: 'replied', reply: 'It is there.\n\nnotice', sendAttempts: 1, fileCount: 1 });
    expect((await store.getTurnFiles('T1')).map((f) => [f.name, f.data?.toString()])).toEqual([['a.txt', 'hi']]);
    expect(await store.getHistory(sessionId)).toEqual(TURN);

    // `persist` stores the messages itself (a child session after a compression); a fenced-out record undoes it.
    await store.beginTurn('T2', sessionId, 1);
    await store.beginTurn('T2', sessionId, 2);
    const elsewhere = await store.startNewSession('agent:main:telegram:dm:8', { source: 'telegram' });
    const rec = {
      turnId: 'T2',
      fence: 1,
      sessionId,
      messages: TURN,
      usage: USAGE,
      reply: 'stale',
      claim: false,
      alongside: [],
      files: [file],
      persist: async () => void (await store.appendMessages(elsewhere.id, TURN, { turnId: 'T2', usage: USAGE })),
    };
    await expect(store.recordTurn(rec)).rejects.toBeInstanceOf(FencedOutError);
    expect(await store.getHistory(elsewhere.id)).toEqual([]);
    expect(await store.getTurnFiles('T2')).toEqual([]);
    await store.recordTurn({ ...rec, fence: 2, reply: 'fresh' });
    expect(await store.getHistory(elsewhere.id)).toEqual(TURN);
    expect(await store.getHistory(sessionId)).toEqual(TURN); // nothing of T2 in the turn's own session
    expect((await store.getSession(elsewhere.id))!.inputTokens).toBe(100);
  });

  it('keeps text with NUL characters, alone and when turns finishing together share a statement (PostgreSQL: each NUL as U+FFFD)', async () => {
    const store = await temp.open();
    // A user's text and a tool's output with NULs (a binary file read as text), next to a backslash before "u0000"
    // (text, not a NUL) and a backslash before a NUL.
    const odd = (n: number): ChatMessage[] => [
      { role: 'user', content: `a\u0000b ${n}` },
      { role: 'assistant', content: null, tool_calls: [CALL] },
      { role: 'tool', content: 'bin\u0000\u0000ary \\u0000 kept \\\u0000', tool_call_id: 'c1', tool_name: 'lookup' },
      { role: 'assistant', content: `done\u0000 ${n}` },
    ];
    const stored = (text: string): string => (backend === 'postgres' ? text.replaceAll('\u0000', '\uFFFD') : text);
    const sessions = await Promise.all([0, 1, 2, 3].map(async (n) => (await store.getOrCreateSession(`${KEY}:${n}`, { source: 'telegram' })).session.id));
    for (const [n, id] of sessions.entries()) await store.beginTurn(`T${n}`, id, 1);
    const record = (n: number) =>
      store.recordTurn({
        turnId: `T${n}`,
        fence: 1,
        sessionId: sessions[n],
        messages: odd(n),
        usage: USAGE,
        reply: `done\u0000 ${n}`,
        claim: true,
        alongside: [],
      });
    await record(0);
    await Promise.all([1, 2, 3].map(record));
    for (const [n, id] of sessions.entries()) {
      expect((await store.getHistory(id)).map((m) => m.content)).toEqual(odd(n).map((m) => (m.content === null ? null : stored(m.content as string))));
      expect((await store.getTurn(`T${n}`))?.reply).toBe(stored(`done\u0000 ${n}`));
    }
  });
});
