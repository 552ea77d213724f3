import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DuplicateSafety } from '@herald/adapters';
import { FencedOutError, type SessionStore } from '@herald/agent-core';
import { useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import type { DeliveryCheck } from '../queue/mailbox.js';
import type { TurnContext } from '../queue/worker.js';
import { LiveTurn } from './progress.js';
import { checkBeforeRecord, EARLIER_SEND_SETTLE_MS, sendReply } from './send-reply.js';
import { recordingEgress } from './test-support.js';

const temp = useTempStores('sqlite');
const log = pino({ level: 'silent' });

async function setup(opts: { check?: DeliveryCheck; safety?: DuplicateSafety; fence?: number } = {}) {
  const store = await temp.open();
  const { session } = await store.getOrCreateSession('agent:main:telegram:dm:5', { source: 'telegram', userId: '5' });
  const fence = opts.fence ?? 7;
  await store.beginTurn('t1', session.id, fence);
  await store.recordReply('t1', 'the answer', fence);
  const egress = recordingEgress({ duplicateSafety: opts.safety ?? 'none' });
  const signal = new AbortController().signal;
  const ctx = {
    sessionKey: 'agent:main:telegram:dm:5',
    entries: [],
    turnId: 't1',
    fence,
    signal,
    canDeliver: async () => (opts.check ?? 'ok') === 'ok',
    deliveryCheck: async () => opts.check ?? 'ok',
    takeSteerMessages: () => [],
    touch: () => undefined,
    log,
  } as TurnContext;
  const live = new LiveTurn({ egress, conversationId: 'telegram:5', platform: 'telegram', chatType: 'dm', signal, canDeliver: ctx.canDeliver, log });
  const duplicates: string[] = [];
  const target = {
    store,
    egress,
    ctx,
    live,
    conversationId: 'telegram:5',
    replyTo: '1',
    onPossibleDuplicate: (p: string) => void duplicates.push(p),
    sendAttemptsAtBegin: 0,
  };
  return { store, egress, target, duplicates };
}

/** Makes the turn's last recorded step old, as after a crash some time ago. */
async function quiet(store: SessionStore): Promise<void> {
  await store.sql.run('UPDATE turns SET updated_at = updated_at - ?', [EARLIER_SEND_SETTLE_MS + 1_000]);
}

describe('sending a recorded reply', () => {
  it('claims the turn, sends with the turn as idempotency key, records the chunk and the delivery', async () => {
    const { store, egress, target, duplicates } = await setup();
    expect(await sendReply(target, 'the answer')).toBe('delivered');
    expect(egress.sends).toHaveLength(1);
    expect(egress.sends[0].opts).toMatchObject({ idempotencyKey: 't1', recover: false, skipChunks: 0 });
    expect(await store.getTurn('t1')).toMatchObject({ status: 'delivered', deliveredIds: ['m1'], sendAttempts: 1 });
    expect(duplicates).toEqual([]);
  });

  it('a reply claimed with its record (the check made before it) is sent without a second check or claim', async () => {
    const { store, egress, target, duplicates } = await setup();
    let checks = 0;
    target.ctx.deliveryCheck = async () => {
      checks++;
      return 'ok';
    };
    await store.sql.run(`UPDATE turns SET status = 'running'`);
    const claim = await store.recordReply('t1', 'the answer', 7, [], { claim: true });
    expect(await sendReply(target, 'the answer', { check: 'ok', recorded: claim })).toBe('delivered');
    expect(checks).toBe(0);
    expect(egress.sends.map((s) => s.opts)).toMatchObject([{ idempotencyKey: 't1', recover: false, skipChunks: 0 }]);
    // One attempt counted: the claim was the record's.
    expect(await store.getTurn('t1')).toMatchObject({ status: 'delivered', deliveredIds: ['m1'], sendAttempts: 1 });
    expect(duplicates).toEqual([]);
  });

  it('a check Redis could not answer before the record leaves the reply unclaimed: the send checks and claims itself', async () => {
    const { store, egress, target } = await setup();
    let checks = 0;
    const redisDown = { deliveryCheck: async (): Promise<DeliveryCheck> => Promise.reject(new Error('Connection is closed.')) };
    expect(await checkBeforeRecord(redisDown)).toBeNull();
    target.ctx.deliveryCheck = async () => {
      checks++;
      return 'ok';
    };
    await store.sql.run(`UPDATE turns SET status = 'running'`);
    const recorded = await store.recordReply('t1', 'the answer', 7, [], { claim: false });
    expect(recorded.sendAttempts).toBe(0);
    expect(await sendReply(target, 'the answer', { check: null, recorded })).toBe('delivered');
    expect(checks).toBe(1);
    expect(egress.sends).toHaveLength(1);
    expect(await store.getTurn('t1')).toMatchObject({ status: 'delivered', sendAttempts: 1 });
    expect(await checkBeforeRecord({ deliveryCheck: async () => 'stale' })).toBe('stale');
  });

  it('a check made before the record that said stale or lock lost sends nothing, as a check made here would', async () => {
    const stale = await setup();
    const staleTurn = await stale.store.getTurn('t1');
    expect(await sendReply(stale.target, 'the answer', { check: 'stale', recorded: staleTurn! })).toBe('stale');
    expect(await stale.store.getTurn('t1')).toMatchObject({ status: 'interrupted', sendAttempts: 0 });
    const lost = await setup();
    const lostTurn = await lost.store.getTurn('t1');
    expect(await sendReply(lost.target, 'the answer', { check: 'lock_lost', recorded: lostTurn! })).toBe('lock lost');
    expect(await lost.store.getTurn('t1')).toMatchObject({ status: 'replied', sendAttempts: 0 });
    expect([...stale.egress.sends, ...lost.egress.sends]).toEqual([]);
  });

  it('an interrupted (stale) reply is marked interrupted and not sent', async () => {
    const { store, egress, target } = await setup({ check: 'stale' });
    expect(await sendReply(target, 'the answer')).toBe('stale');
    expect(egress.sends).toEqual([]);
    expect((await store.getTurn('t1'))?.status).toBe('interrupted');
  });

  it('a lost lock is not an interrupt: nothing is sent or written, the turn stays for the worker that holds it now', async () => {
    const { store, egress, target } = await setup({ check: 'lock_lost' });
    expect(await sendReply(target, 'the answer')).toBe('lock lost');
    expect(egress.sends).toEqual([]);
    expect(await store.getTurn('t1')).toMatchObject({ status: 'replied', sendAttempts: 0 });
  });

  it('a re-run after an unrecorded send: asks the platform to recover; Telegram cannot, so it is counted', async () => {
    for (const [safety, counted] of [
      ['none', ['telegram']],
      ['detectable', []],
      ['idempotent', []],
    ] as const) {
      const { store, egress, target, duplicates } = await setup({ safety });
      // An earlier attempt claimed the send and crashed before recording anything (a while ago).
      await store.claimDelivery('t1', 7);
      await quiet(store);
      target.sendAttemptsAtBegin = 1; // as beginTurn would have seen it
      expect(await sendReply(target, 'the answer')).toBe('delivered');
      expect(egress.sends[0].opts).toMatchObject({ recover: true, idempotencyKey: 't1' });
      expect(duplicates).toEqual(counted);
    }
  });

  it('continues after the chunks an earlier attempt recorded', async () => {
    const { store, egress, target } = await setup();
    await store.claimDelivery('t1', 7);
    await store.recordChunk('t1', 'm-old');
    await quiet(store);
    target.sendAttemptsAtBegin = 1;
    await sendReply(target, 'the answer');
    expect(egress.sends[0].opts?.skipChunks).toBe(1);
    expect((await store.getTurn('t1'))?.deliveredIds).toEqual(['m-old', 'm1']);
  });

  it('an earlier sender still at work (it lost the session, but is alive) is waited for: what it reports is not sent again', async () => {
    const { store, egress, target, duplicates } = await setup();
    await store.claimDelivery('t1', 7); // it started sending just now
    target.sendAttemptsAtBegin = 1;
    const sending = sendReply(target, 'the answer');
    // The earlier sender reports its delivery while the new attempt waits.
    await store.markDelivered('t1', ['m-earlier']);
    expect(await sending).toBe('nothing to send');
    expect(egress.sends).toEqual([]);
    expect(duplicates).toEqual([]);
  });

  it('a worker whose fence is outdated cannot claim the send', async () => {
    const { store, egress, target } = await setup();
    await store.beginTurn('t1', (await store.getTurn('t1'))!.sessionId, 8); // another worker took the session
    await expect(sendReply(target, 'the answer')).rejects.toThrow(FencedOutError);
    expect(egress.sends).toEqual([]);
  });
});
