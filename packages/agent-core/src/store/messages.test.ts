import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolCall } from '../types.js';
import { StoreNotFoundError } from './errors.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores();

const call = (id: string, name: string): ToolCall => ({ id, type: 'function', function: { name, arguments: '{"q":1}' } });

/** One agent turn: question, a reply that calls two tools, both results, and the final answer. */
const TURN: ChatMessage[] = [
  { role: 'user', content: 'weather in Oslo and Bergen?' },
  {
    role: 'assistant',
    content: null,
    reasoning: 'need both cities',
    tool_calls: [call('c1', 'weather'), call('c2', 'weather')],
    finish_reason: 'tool_calls',
  },
  { role: 'tool', content: 'Oslo: 3°C', tool_call_id: 'c1', tool_name: 'weather' },
  { role: 'tool', content: 'Bergen: 7°C', tool_call_id: 'c2', tool_name: 'weather' },
  { role: 'assistant', content: 'Oslo 3°C, Bergen 7°C.', finish_reason: 'stop' },
];

function newSession() {
  const store = temp.open();
  const { session } = store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram' });
  return { store, sessionId: session.id };
}

describe('appendMessages', () => {
  it('round-trips the internal message format in order', () => {
    const { store, sessionId } = newSession();
    store.appendMessages(sessionId, TURN);
    expect(store.getHistory(sessionId)).toEqual(TURN);
  });

  it('counts every message, and tool calls only from assistant messages', () => {
    const { store, sessionId } = newSession();
    store.appendMessages(sessionId, TURN.slice(0, 2));
    let session = store.getSession(sessionId)!;
    expect([session.messageCount, session.toolCallCount]).toEqual([2, 2]);
    store.appendMessages(sessionId, TURN.slice(2));
    session = store.getSession(sessionId)!;
    expect([session.messageCount, session.toolCallCount]).toEqual([5, 2]);
  });

  it('returns stored rows with ids, timestamps, turn positions and the platform message id', () => {
    const { store, sessionId } = newSession();
    const before = Date.now();
    const [stored] = store.appendMessages(sessionId, [TURN[0]], { turnId: 't1', platformMessageId: 'tg-77' });
    expect(stored).toMatchObject({ sessionId, role: 'user', turnId: 't1', seq: 0, platformMessageId: 'tg-77' });
    expect(stored.id).toBeGreaterThan(0);
    expect(stored.createdAt).toBeGreaterThanOrEqual(before);
    expect(store.getMessages(sessionId)).toEqual([stored]);
  });

  it('writes a turn once even when it is persisted again after a crash', () => {
    const { store, sessionId } = newSession();
    const first = store.appendMessages(sessionId, TURN, { turnId: 'telegram:42' });
    const again = store.appendMessages(sessionId, TURN, { turnId: 'telegram:42' });
    expect(again.map((m) => m.id)).toEqual(first.map((m) => m.id));
    expect(store.getHistory(sessionId)).toEqual(TURN);
    const session = store.getSession(sessionId)!;
    expect([session.messageCount, session.toolCallCount]).toEqual([5, 2]);
  });

  it('persists a turn in several calls and still deduplicates a partial re-run', () => {
    const { store, sessionId } = newSession();
    store.appendMessages(sessionId, [TURN[0]], { turnId: 't' });
    store.appendMessages(sessionId, TURN.slice(1, 3), { turnId: 't', firstSeq: 1 });
    // The re-run re-appends everything from the start: only the missing tail is new.
    store.appendMessages(sessionId, TURN, { turnId: 't' });
    expect(store.getHistory(sessionId)).toEqual(TURN);
    expect(store.getSession(sessionId)!.messageCount).toBe(5);
  });

  it('keeps identical messages without a turn id, and different turns apart', () => {
    const { store, sessionId } = newSession();
    store.appendMessages(sessionId, [TURN[0]]);
    store.appendMessages(sessionId, [TURN[0]]);
    store.appendMessages(sessionId, [TURN[0]], { turnId: 'a' });
    store.appendMessages(sessionId, [TURN[0]], { turnId: 'b' });
    expect(store.getMessages(sessionId)).toHaveLength(4);
  });

  it('rejects an unknown session with a typed error and writes nothing', () => {
    const { store } = newSession();
    expect(() => store.appendMessages('nope', TURN)).toThrow(StoreNotFoundError);
    expect(store.search('Oslo')).toEqual([]);
  });
});

describe('getMessages', () => {
  it('pages through a transcript', () => {
    const { store, sessionId } = newSession();
    const stored = store.appendMessages(sessionId, TURN);
    expect(store.getMessages(sessionId, { limit: 2 }).map((m) => m.id)).toEqual([stored[0].id, stored[1].id]);
    expect(store.getMessages(sessionId, { afterId: stored[3].id }).map((m) => m.content)).toEqual([
      'Oslo 3°C, Bergen 7°C.',
    ]);
  });
});

describe('deleteMessagesFrom', () => {
  it('removes the message and everything after it, fixing the counters (/retry, /undo)', () => {
    const { store, sessionId } = newSession();
    const stored = store.appendMessages(sessionId, [...TURN, { role: 'user', content: 'thanks' }]);
    expect(store.deleteMessagesFrom(sessionId, stored[1].id)).toBe(5);
    expect(store.getHistory(sessionId)).toEqual([TURN[0]]);
    const session = store.getSession(sessionId)!;
    expect([session.messageCount, session.toolCallCount]).toEqual([1, 0]);
    // The deleted turn may now be persisted afresh.
    store.appendMessages(sessionId, TURN.slice(1), { turnId: 'retry' });
    expect(store.getSession(sessionId)!.toolCallCount).toBe(2);
  });

  it('deletes nothing when the message belongs to another session', () => {
    const { store, sessionId } = newSession();
    const other = store.startNewSession('other', { source: 'telegram' });
    const [foreign] = store.appendMessages(other.id, [TURN[0]]);
    store.appendMessages(sessionId, TURN);
    expect(store.deleteMessagesFrom(sessionId, foreign.id)).toBe(0);
    expect(store.getMessages(sessionId)).toHaveLength(5);
    expect(store.getSession(sessionId)!.messageCount).toBe(5);
  });
});
