import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolCall } from '../base/types.js';
import { StoreNotFoundError } from './errors.js';
import { INSERT_CHUNK } from './messages.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

describe.each(STORE_BACKENDS)('transcripts on %s', (backend) => {
  const temp = useTempStores(backend);

  const call = (id: string, name: string): ToolCall => ({ id, type: 'function', function: { name, arguments: '{"q":1}' } });

  /** One agent turn: question, a reply that calls two tools, both results, and the final answer. */
  const TURN: ChatMessage[] = [
    { role: 'user', content: 'weather in Oslo and Bergen?' },
    {
      role: 'assistant',
      content: null,
      reasoning: 'need both cities',
      // Encrypted reasoning (Responses API) round-trips as opaque JSON.
      reasoning_details: [{ format: 'openai-responses', model: 'o4-mini', data: { id: 'rs_1', summary: [], encrypted_content: 'gAAAABxyz' } }],
      tool_calls: [call('c1', 'weather'), call('c2', 'weather')],
      finish_reason: 'tool_calls',
    },
    { role: 'tool', content: 'Oslo: 3°C', tool_call_id: 'c1', tool_name: 'weather' },
    { role: 'tool', content: 'Bergen: 7°C', tool_call_id: 'c2', tool_name: 'weather' },
    { role: 'assistant', content: 'Oslo 3°C, Bergen 7°C.', finish_reason: 'stop' },
  ];

  async function newSession() {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram' });
    return { store, sessionId: session.id };
  }

  describe('appendMessages', () => {
    it('round-trips the internal message format in order', async () => {
      const { store, sessionId } = await newSession();
      await store.appendMessages(sessionId, TURN);
      expect(await store.getHistory(sessionId)).toEqual(TURN);
    });

    it("reads a turn's history apart from what the turn itself saved, both in the internal format", async () => {
      const { store, sessionId } = await newSession();
      await store.appendMessages(sessionId, [{ role: 'user', content: 'no turn id' }]);
      await store.appendMessages(sessionId, TURN, { turnId: 'T1' });
      await store.appendMessages(sessionId, [{ role: 'user', content: 'later, another turn' }], { turnId: 'T2' });
      const { history, saved } = await store.getTurnHistory(sessionId, 'T1');
      expect(history).toEqual([
        { role: 'user', content: 'no turn id' },
        { role: 'user', content: 'later, another turn' },
      ]);
      expect(saved).toEqual(TURN);
      expect((await store.getTurnHistory(sessionId, 'T9')).history).toEqual([
        { role: 'user', content: 'no turn id' },
        ...TURN,
        { role: 'user', content: 'later, another turn' },
      ]);
    });

    it('keeps the references of files a user sent, and never the image bytes shown with them', async () => {
      const { store, sessionId } = await newSession();
      const ref = { platform: 'telegram', fileId: 'AgAC1', url: 'tg-file:AgAC1', kind: 'image' as const, mimeType: 'image/jpeg', size: 2048, name: 'cat.jpg' };
      await store.appendMessages(sessionId, [
        { role: 'user', content: 'cat?\n[Image: cat.jpg]', attachments: [ref], images: [{ mimeType: 'image/jpeg', data: '/9j/4AAQ' }] },
      ]);
      expect(await store.getHistory(sessionId)).toEqual([{ role: 'user', content: 'cat?\n[Image: cat.jpg]', attachments: [ref] }]);
      expect((await store.getMessages(sessionId))[0].attachments).toEqual([ref]);
    });

    it('counts every message, and tool calls only from assistant messages', async () => {
      const { store, sessionId } = await newSession();
      await store.appendMessages(sessionId, TURN.slice(0, 2));
      let session = (await store.getSession(sessionId))!;
      expect([session.messageCount, session.toolCallCount]).toEqual([2, 2]);
      await store.appendMessages(sessionId, TURN.slice(2));
      session = (await store.getSession(sessionId))!;
      expect([session.messageCount, session.toolCallCount]).toEqual([5, 2]);
    });

    it('returns stored rows with ids, timestamps, turn positions and the platform message id', async () => {
      const { store, sessionId } = await newSession();
      const before = Date.now();
      const [stored] = await store.appendMessages(sessionId, [TURN[0]], { turnId: 't1', platformMessageId: 'tg-77' });
      expect(stored).toMatchObject({ sessionId, role: 'user', turnId: 't1', seq: 0, platformMessageId: 'tg-77' });
      expect(stored.id).toBeGreaterThan(0);
      expect(stored.createdAt).toBeGreaterThanOrEqual(before);
      expect(await store.getMessages(sessionId)).toEqual([stored]);
    });

    it('writes a turn once even when it is persisted again after a crash', async () => {
      const { store, sessionId } = await newSession();
      const first = await store.appendMessages(sessionId, TURN, { turnId: 'telegram:42' });
      const again = await store.appendMessages(sessionId, TURN, { turnId: 'telegram:42' });
      expect(again.map((m) => m.id)).toEqual(first.map((m) => m.id));
      expect(await store.getHistory(sessionId)).toEqual(TURN);
      const session = (await store.getSession(sessionId))!;
      expect([session.messageCount, session.toolCallCount]).toEqual([5, 2]);
    });

    it('persists a turn in several calls and still deduplicates a partial re-run', async () => {
      const { store, sessionId } = await newSession();
      await store.appendMessages(sessionId, [TURN[0]], { turnId: 't' });
      await store.appendMessages(sessionId, TURN.slice(1, 3), { turnId: 't', firstSeq: 1 });
      // The re-run re-appends everything from the start: only the missing tail is new.
      await store.appendMessages(sessionId, TURN, { turnId: 't' });
      expect(await store.getHistory(sessionId)).toEqual(TURN);
      expect((await store.getSession(sessionId))!.messageCount).toBe(5);
    });

    it('writes a long transcript in chunks, in order, and a re-run across a chunk boundary adds only what is missing', async () => {
      const { store, sessionId } = await newSession();
      const long = Array.from(
        { length: 2 * INSERT_CHUNK + 7 },
        (_, i): ChatMessage => (i % 5 === 1 ? { ...TURN[1], content: `m${i}` } : { role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}` }),
      );
      // Without a turn id (a compressed history seeding a child session): every row, in input order.
      const plain = await store.appendMessages(sessionId, long);
      expect(plain.map((m) => m.content)).toEqual(long.map((m) => m.content));
      expect(plain.map((m) => m.id)).toEqual([...plain.map((m) => m.id)].sort((a, b) => a - b));
      // A turn saved up to just past the first chunk, then persisted whole: the stored rows come back in input order.
      const { session: other } = await store.getOrCreateSession('agent:main:telegram:dm:2', { source: 'telegram' });
      const early = await store.appendMessages(other.id, long.slice(0, INSERT_CHUNK + 3), { turnId: 'T' });
      const whole = await store.appendMessages(other.id, long, { turnId: 'T' });
      expect(whole.map((m) => m.content)).toEqual(long.map((m) => m.content));
      expect(whole.slice(0, INSERT_CHUNK + 3).map((m) => m.id)).toEqual(early.map((m) => m.id));
      expect(whole.map((m) => m.seq)).toEqual(long.map((_, i) => i));
      const calls = long.filter((m) => m.tool_calls).length * 2;
      for (const id of [sessionId, other.id]) {
        const s = (await store.getSession(id))!;
        expect([s.messageCount, s.toolCallCount]).toEqual([long.length, calls]);
      }
      expect(await store.getHistory(other.id)).toEqual(long);
    });

    it("adds a turn's usage with its messages, and again on a re-run that adds no message (the counts only once)", async () => {
      const { store, sessionId } = await newSession();
      const usage = { input: 100, output: 20, cacheRead: 30, cacheWrite: 0, costUsd: 0.5, lastPromptTokens: 150, apiCalls: 2 };
      await store.appendMessages(sessionId, TURN, { turnId: 'u1', usage });
      let s = (await store.getSession(sessionId))!;
      expect([s.messageCount, s.toolCallCount, s.inputTokens, s.outputTokens, s.cacheReadTokens, s.lastPromptTokens]).toEqual([5, 2, 100, 20, 30, 150]);
      expect(s.estimatedCostUsd).toBeCloseTo(0.5);
      const again = await store.appendMessages(sessionId, TURN, { turnId: 'u1', usage: { ...usage, lastPromptTokens: 160 } });
      expect(again.map((m) => m.content)).toEqual(TURN.map((m) => m.content));
      s = (await store.getSession(sessionId))!;
      expect([s.messageCount, s.toolCallCount, s.inputTokens, s.lastPromptTokens]).toEqual([5, 2, 200, 160]);
      await expect(store.appendMessages('nope', TURN, { turnId: 'u2', usage })).rejects.toThrow(StoreNotFoundError);
    });

    it('keeps identical messages without a turn id, and different turns apart', async () => {
      const { store, sessionId } = await newSession();
      await store.appendMessages(sessionId, [TURN[0]]);
      await store.appendMessages(sessionId, [TURN[0]]);
      await store.appendMessages(sessionId, [TURN[0]], { turnId: 'a' });
      await store.appendMessages(sessionId, [TURN[0]], { turnId: 'b' });
      expect(await store.getMessages(sessionId)).toHaveLength(4);
    });

    it('rejects an unknown session with a typed error and writes nothing', async () => {
      const { store } = await newSession();
      await expect(store.appendMessages('nope', TURN)).rejects.toThrow(StoreNotFoundError);
      expect(await store.search('Oslo')).toEqual([]);
    });
  });

  describe('getMessages', () => {
    it('pages through a transcript', async () => {
      const { store, sessionId } = await newSession();
      const stored = await store.appendMessages(sessionId, TURN);
      expect((await store.getMessages(sessionId, { limit: 2 })).map((m) => m.id)).toEqual([stored[0].id, stored[1].id]);
      expect((await store.getMessages(sessionId, { afterId: stored[3].id })).map((m) => m.content)).toEqual(['Oslo 3°C, Bergen 7°C.']);
    });
  });

  describe('deleteMessagesFrom', () => {
    it('removes the message and everything after it, fixing the counters (/retry, /undo)', async () => {
      const { store, sessionId } = await newSession();
      const stored = await store.appendMessages(sessionId, [...TURN, { role: 'user', content: 'thanks' }]);
      expect(await store.deleteMessagesFrom(sessionId, stored[1].id)).toBe(5);
      expect(await store.getHistory(sessionId)).toEqual([TURN[0]]);
      const session = (await store.getSession(sessionId))!;
      expect([session.messageCount, session.toolCallCount]).toEqual([1, 0]);
      // The deleted turn may now be persisted afresh.
      await store.appendMessages(sessionId, TURN.slice(1), { turnId: 'retry' });
      expect((await store.getSession(sessionId))!.toolCallCount).toBe(2);
    });

    it('deletes nothing when the message belongs to another session', async () => {
      const { store, sessionId } = await newSession();
      const other = await store.startNewSession('other', { source: 'telegram' });
      const [foreign] = await store.appendMessages(other.id, [TURN[0]]);
      await store.appendMessages(sessionId, TURN);
      expect(await store.deleteMessagesFrom(sessionId, foreign.id)).toBe(0);
      expect(await store.getMessages(sessionId)).toHaveLength(5);
      expect((await store.getSession(sessionId))!.messageCount).toBe(5);
    });
  });
});
