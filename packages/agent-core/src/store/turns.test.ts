import { describe, expect, it } from 'vitest';
import { FencedOutError, StoreNotFoundError } from './errors.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const CALL = { id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"x"}' } };

describe.each(STORE_BACKENDS)('the turn outbox on %s', (backend) => {
  const temp = useTempStores(backend);

  async function withSession() {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:slack:thread:C1:171.5', { source: 'slack' });
    return { store, sessionId: session.id };
  }

  describe('turn progress (incremental persistence)', () => {
    it('saves a running turn so far under its fence; a re-run reads it back apart from the history; a fenced-out run writes nothing', async () => {
      const { store, sessionId } = await withSession();
      await store.appendMessages(
        sessionId,
        [
          { role: 'user', content: 'earlier' },
          { role: 'assistant', content: 'before' },
        ],
        { turnId: 'T0' },
      );
      await store.beginTurn('T1', sessionId, 1);
      const call = { id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{}' } };
      const batch = [
        { role: 'user' as const, content: 'look it up' },
        { role: 'assistant' as const, content: null, tool_calls: [call] },
        { role: 'tool' as const, content: 'found', tool_call_id: 'c1', tool_name: 'lookup' },
      ];
      await store.checkpointTurn('T1', 1, sessionId, batch.slice(0, 1));
      await store.checkpointTurn('T1', 1, sessionId, batch);
      const { history, saved } = await store.getTurnHistory(sessionId, 'T1');
      expect(history.map((m) => m.content)).toEqual(['earlier', 'before']);
      expect(saved).toEqual(batch);
      // Saved twice, stored once.
      expect((await store.getSession(sessionId))?.messageCount).toBe(5);

      // Another worker took the turn over: the old one's saves are refused and leave nothing behind.
      await store.beginTurn('T1', sessionId, 2);
      await expect(store.checkpointTurn('T1', 1, sessionId, [...batch, { role: 'assistant', content: 'stale' }])).rejects.toBeInstanceOf(FencedOutError);
      expect((await store.getTurnHistory(sessionId, 'T1')).saved).toHaveLength(3);
    });
  });

  describe("beginning a turn in the key's open session", () => {
    const KEY = 'agent:main:slack:thread:C1:171.5';

    it('reads the open session with the begin; none when the key has no open session', async () => {
      const { store, sessionId } = await withSession();
      expect(await store.beginTurnInOpenSession('T-none', 'agent:main:slack:thread:C9:1.1', 1)).toBeNull();
      const opened = await store.beginTurnInOpenSession('T1', KEY, 3);
      expect(opened?.session).toEqual(await store.getSession(sessionId));
      expect(opened?.turn).toEqual(await store.getTurn('T1'));
      expect(opened?.turn).toMatchObject({ id: 'T1', sessionId, status: 'running', fence: 3, sendAttempts: 0 });
      // An ended session is not open: nothing begins (the caller starts the next session).
      await store.endSession(sessionId, 'session_reset');
      expect(await store.beginTurnInOpenSession('T2', KEY, 1)).toBeNull();
      expect(await store.getTurn('T2')).toBeNull();
    });

    it("gives the turn's transcript as getTurnHistory does (PostgreSQL reads it with the begin; SQLite leaves it to that call)", async () => {
      const { store, sessionId } = await withSession();
      const empty = await store.beginTurnInOpenSession('T0', KEY, 1);
      if (backend === 'postgres') expect(empty?.history).toEqual({ history: [], saved: [] });
      await store.appendMessages(
        sessionId,
        [
          { role: 'user', content: 'before' },
          { role: 'assistant', content: 'answer', tool_calls: [CALL] },
        ],
        { turnId: 'T0' },
      );
      // What an earlier run of T1 saved (out of seq order on purpose), and a message with every optional field.
      await store.appendMessages(sessionId, [{ role: 'tool', content: 'second', tool_call_id: 'c1', tool_name: 'lookup' }], { turnId: 'T1', firstSeq: 1 });
      await store.appendMessages(sessionId, [{ role: 'user', content: 'again' }], { turnId: 'T1', firstSeq: 0 });
      const opened = await store.beginTurnInOpenSession('T1', KEY, 2);
      const expected = await store.getTurnHistory(sessionId, 'T1');
      expect(expected.saved.map((m) => m.content)).toEqual(['again', 'second']);
      expect(opened?.history).toEqual(backend === 'postgres' ? expected : undefined);
    });

    it("with the reset policy's bound: a session last active before it is expired (no turn begun), one active since is begun in", async () => {
      const { store, sessionId } = await withSession();
      const started = (await store.getSession(sessionId))?.startedAt as number;
      // No messages: the session's start is its last activity.
      expect(await store.beginTurnInOpenSession('T0', KEY, 1, undefined, started + 1)).toEqual({
        expired: await store.getSession(sessionId),
        lastActivity: started,
      });
      expect(await store.getTurn('T0')).toBeNull();
      await store.appendMessages(sessionId, [{ role: 'user', content: 'hi' }]);
      const lastMessageAt = (await store.getMessages(sessionId)).at(-1)?.createdAt as number;
      const expired = await store.beginTurnInOpenSession('T1', KEY, 1, undefined, lastMessageAt + 1);
      expect(expired).toMatchObject({ expired: { id: sessionId }, lastActivity: lastMessageAt });
      expect(await store.getTurn('T1')).toBeNull();
      // Active at the bound: current, begun in.
      const opened = await store.beginTurnInOpenSession('T1', KEY, 1, undefined, lastMessageAt);
      expect(opened).toMatchObject({ session: { id: sessionId }, turn: { id: 'T1', status: 'running' } });
      // No bound (null): never expired.
      expect(await store.beginTurnInOpenSession('T2', KEY, 1, undefined, null)).toMatchObject({ turn: { id: 'T2' } });
    });

    it('a turn begun before the session expired (a recovered job) is begun again in it, finished or not; a new turn is not', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurnInOpenSession('T1', KEY, 1);
      await store.recordReply('T1', 'sent before the crash', 1);
      await store.markDelivered('T1', ['m-1']);
      const started = (await store.getSession(sessionId))?.startedAt as number;
      const bound = started + 1;
      const rerun = await store.beginTurnInOpenSession('T1', KEY, 2, undefined, bound);
      expect(rerun).toMatchObject({ session: { id: sessionId }, turn: { id: 'T1', fence: 2, status: 'delivered' } });
      expect((await store.getSession(sessionId))?.endedAt).toBeNull();
      expect(await store.beginTurnInOpenSession('T2', KEY, 2, undefined, bound)).toMatchObject({ expired: { id: sessionId }, lastActivity: started });
      expect(await store.getTurn('T2')).toBeNull();
    });

    it('a re-run takes the turn over under a newer fence and keeps what it recorded; an older fence is refused', async () => {
      const { store } = await withSession();
      await store.beginTurnInOpenSession('T1', KEY, 1);
      await store.recordReply('T1', 'done before the crash', 1);
      const rerun = await store.beginTurnInOpenSession('T1', KEY, 2);
      expect(rerun?.turn).toMatchObject({ fence: 2, status: 'replied', reply: 'done before the crash' });
      await expect(store.beginTurnInOpenSession('T1', KEY, 1)).rejects.toBeInstanceOf(FencedOutError);
      expect((await store.getTurn('T1'))?.fence).toBe(2);
    });
  });

  describe('turn outbox', () => {
    it('tracks a turn from running to delivered, chunk by chunk', async () => {
      const { store, sessionId } = await withSession();
      const started = await store.beginTurn('slack:Ev1', sessionId, 10);
      expect(started).toMatchObject({ id: 'slack:Ev1', sessionId, status: 'running', reply: null, deliveredIds: [], error: null, fence: 10, sendAttempts: 0 });

      expect(await store.recordReply('slack:Ev1', 'Here you go.', 10)).toMatchObject({ status: 'replied', reply: 'Here you go.' });
      expect(await store.claimDelivery('slack:Ev1', 10)).toMatchObject({ status: 'replied', sendAttempts: 1 });
      expect((await store.recordChunk('slack:Ev1', '171.6')).deliveredIds).toEqual(['171.6']);
      const delivered = await store.markDelivered('slack:Ev1', ['171.6', '171.7']);
      expect(delivered).toMatchObject({ status: 'delivered', reply: 'Here you go.', deliveredIds: ['171.6', '171.7'] });
      expect(await store.getTurn('slack:Ev1')).toEqual(delivered);
      // Delivered: nothing left to claim.
      expect(await store.claimDelivery('slack:Ev1', 10)).toBeNull();
    });

    it('records a reply and claims it for sending in one write; a re-run sees the attempt', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t2', sessionId, 4);
      expect(await store.recordReply('t2', 'sent at once', 4, [], { claim: true })).toMatchObject({
        status: 'replied',
        reply: 'sent at once',
        sendAttempts: 1,
      });
      // A crash before the delivery was recorded: the next owner's claim says an attempt began.
      await store.beginTurn('t2', sessionId, 5);
      expect(await store.claimDelivery('t2', 5)).toMatchObject({ sendAttempts: 2 });
      // Only a running turn, under its own fence, records (and so claims).
      await expect(store.recordReply('t2', 'again', 5, [], { claim: true })).rejects.toThrow(FencedOutError);
      await store.beginTurn('t3', sessionId, 6);
      await store.beginTurn('t3', sessionId, 7);
      await expect(store.recordReply('t3', 'late', 6, [], { claim: true })).rejects.toThrow(FencedOutError);
      expect(await store.getTurn('t3')).toMatchObject({ status: 'running', sendAttempts: 0 });
    });

    it('tells a re-run after a crash what already happened instead of starting over', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t1', sessionId, 1);
      await store.recordReply('t1', 'computed before the crash', 1);
      await store.claimDelivery('t1', 1);
      await store.recordChunk('t1', 'm1');
      // The job runs again on another worker: the reply is there, so it must be delivered, not regenerated, and
      // the second claim says an earlier attempt began sending (and which chunk it recorded).
      const rerun = await store.beginTurn('t1', sessionId, 2);
      expect(rerun).toMatchObject({ status: 'replied', reply: 'computed before the crash', fence: 2, deliveredIds: ['m1'] });
      expect(await store.claimDelivery('t1', 2)).toMatchObject({ sendAttempts: 2, deliveredIds: ['m1'] });
      await store.markDelivered('t1', ['m2']);
      expect(await store.beginTurn('t1', sessionId, 3)).toMatchObject({ status: 'delivered', deliveredIds: ['m1', 'm2'] });
    });

    it('fences: once a newer worker took the turn, the older one can neither write, claim nor end it', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t5', sessionId, 100);
      await store.beginTurn('t5', sessionId, 200); // the session's lock moved to another worker
      await expect(store.recordReply('t5', 'late', 100)).rejects.toThrow(FencedOutError);
      await expect(store.claimDelivery('t5', 100)).rejects.toThrow(FencedOutError);
      await expect(store.markTurn('t5', 'failed', 100)).rejects.toThrow(FencedOutError);
      await expect(store.recordStreamMessage('t5', 100, 's')).rejects.toThrow(FencedOutError);
      // And a late begin with the old fence does not take it back.
      await expect(store.beginTurn('t5', sessionId, 100)).rejects.toThrow(FencedOutError);
      expect(await store.getTurn('t5')).toMatchObject({ status: 'running', fence: 200, deliveredIds: [] });
    });

    it('a delivery is a fact: recorded whichever worker made it, so the new owner does not send it again', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t9', sessionId, 100);
      await store.recordReply('t9', 'the answer', 100);
      await store.claimDelivery('t9', 100); // the old owner starts sending...
      await store.beginTurn('t9', sessionId, 200); // ...loses the session meanwhile...
      await store.recordChunk('t9', 'm1'); // ...and still reports what reached the platform
      await store.markDelivered('t9', ['m1']);
      expect(await store.getTurn('t9')).toMatchObject({ status: 'delivered', deliveredIds: ['m1'], fence: 200 });
      expect(await store.claimDelivery('t9', 200)).toBeNull();
    });

    it("a fenced-out worker's transcript rolls back with its reply", async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t6', sessionId, 1);
      expect(await store.fenceOut('t6', 5, 'failed', 'abandoned by the watchdog')).toBe(true);
      await expect(
        store.transaction(async () => {
          await store.appendMessages(sessionId, [{ role: 'user', content: 'zombie' }], { turnId: 't6' });
          await store.recordReply('t6', 'zombie reply', 1);
        }),
      ).rejects.toThrow(FencedOutError);
      expect(await store.getHistory(sessionId)).toEqual([]);
      expect(await store.getTurn('t6')).toMatchObject({ status: 'failed', error: 'abandoned by the watchdog', fence: 5 });
      // An even newer owner is not overruled by an older fence-out.
      expect(await store.fenceOut('t6', 4, 'failed', 'late')).toBe(false);
    });

    it('records deliveries with a compare-and-set: a stale view of what is recorded is read again, nothing is lost', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t10', sessionId, 1);
      expect((await store.recordChunk('t10', 'a', [])).deliveredIds).toEqual(['a']);
      // Another writer recorded 'a' since this caller looked: its 'b' still lands after it.
      expect((await store.recordChunk('t10', 'b', [])).deliveredIds).toEqual(['a', 'b']);
      expect(await store.markDelivered('t10', ['c'], ['a'])).toMatchObject({ status: 'delivered', deliveredIds: ['a', 'b', 'c'] });
      await expect(store.recordChunk('ghost', 'x', [])).rejects.toThrow(StoreNotFoundError);
    });

    it('remembers the message a streamed reply is written into', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t7', sessionId, 1);
      await store.recordStreamMessage('t7', 1, 'stream-1');
      expect((await store.beginTurn('t7', sessionId, 2)).streamMessageId).toBe('stream-1');
    });

    it('records interruptions and failures with their error', async () => {
      const { store, sessionId } = await withSession();
      await store.beginTurn('t3', sessionId, 1);
      expect(await store.markTurn('t3', 'interrupted', 1)).toMatchObject({ status: 'interrupted', error: null });
      expect(await store.markTurn('t3', 'failed', 1, 'provider 500')).toMatchObject({ status: 'failed', error: 'provider 500' });
      expect((await store.getTurn('t3'))?.updatedAt).toBeGreaterThanOrEqual((await store.getTurn('t3'))!.createdAt);
    });

    it('keeps fences of microsecond timestamps exactly', async () => {
      const { store, sessionId } = await withSession();
      const fence = 1_795_600_000_123_456;
      expect((await store.beginTurn('t8', sessionId, fence)).fence).toBe(fence);
      await expect(store.recordReply('t8', 'ok', fence)).resolves.toMatchObject({ status: 'replied' });
    });

    it('refuses unknown turns and sessions with a typed error', async () => {
      const { store } = await withSession();
      expect(await store.getTurn('ghost')).toBeNull();
      await expect(store.recordReply('ghost', 'x', 1)).rejects.toThrow(StoreNotFoundError);
      await expect(store.markDelivered('ghost', ['x'])).rejects.toThrow(StoreNotFoundError);
      await expect(store.recordChunk('ghost', 'x')).rejects.toThrow(StoreNotFoundError);
      await expect(store.markTurn('ghost', 'failed', 1)).rejects.toThrow(StoreNotFoundError);
      await expect(store.beginTurn('t4', 'no-session', 1)).rejects.toThrow(StoreNotFoundError);
    });
  });

  describe('known threads', () => {
    it('remembers threads per platform, idempotently', async () => {
      const { store } = await withSession();
      expect(await store.isKnownThread('discord', '999')).toBe(false);
      await store.rememberThread('discord', '999');
      await store.rememberThread('discord', '999');
      expect(await store.isKnownThread('discord', '999')).toBe(true);
      expect(await store.isKnownThread('slack', '999')).toBe(false);
    });
  });
});
