/**
 * Messages that wait for an answer of their own (the HTTP API's): never merged with others, withdrawn by their
 * sender — skipped before they run, stopped like /stop while they run — and every finished turn reported once its
 * entries are gone (onTurnEnd), with real Redis and BullMQ.
 */
import { describe, expect, it } from 'vitest';
import { ControlBus } from './control.js';
import type { MailboxEntry, TurnPayload } from './mailbox.js';
import { jobIdFor } from './producer.js';
import { TurnAbort, type TurnContext } from './worker.js';
import { keyOf, rig, until } from './test-support.js';

const apiPayload = (requestId: string, text: string): TurnPayload => ({
  text,
  platform: 'api',
  conversationId: `api:${requestId}`,
  chatType: 'dm',
  chatId: 'notes',
  userId: 'key-1',
  messageId: requestId,
  platformMessageId: requestId,
  withdrawable: true,
});

describe('withdrawable messages', () => {
  it('interrupt mode merges pending messages only while they reply to the same place: each API request gets a turn of its own', async () => {
    const turns: string[][] = [];
    const ended: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { producer } = await rig({
      workers: 1,
      mode: 'interrupt',
      runTurn: async (ctx: TurnContext) => {
        turns.push(ctx.entries.map((e) => e.payload.text));
        if (ctx.entries[0].payload.text === 'first') await gate;
      },
      onTurnEnd: async (entries: MailboxEntry[]) => void ended.push(entries.map((e) => e.payload.text)),
    });
    const key = keyOf(900);
    await producer.submit(key, apiPayload('r1', 'first'), 'queue');
    await until(() => turns.length === 1);
    for (const [id, text] of [
      ['r2', 'second'],
      ['r3', 'third'],
    ])
      await producer.submit(key, apiPayload(id, text), 'queue');
    release();
    await until(() => ended.length === 3);
    expect(turns).toEqual([['first'], ['second'], ['third']]);
    expect(ended).toEqual([['first'], ['second'], ['third']]);
  });

  it('a withdrawn message is skipped before it runs; one withdrawn while running is stopped like /stop; the session goes on', async () => {
    const ran: string[] = [];
    const aborts: string[] = [];
    const ended: string[] = [];
    const { producer, mailbox, redis, prefix } = await rig({
      workers: 1,
      mode: 'queue',
      runTurn: async (ctx: TurnContext) => {
        const text = ctx.entries[0].payload.text;
        ran.push(text);
        if (text !== 'slow') return;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        const reason: unknown = ctx.signal.reason;
        aborts.push(reason instanceof TurnAbort ? reason.kind : String(reason));
      },
      onTurnEnd: async (entries) => void ended.push(...entries.map((e) => e.payload.text)),
    });
    const control = new ControlBus(redis, null, prefix);
    const key = keyOf(901);
    await producer.submit(key, apiPayload('s1', 'slow'), 'queue');
    await until(() => ran.length === 1);
    // Queued behind the running one, then withdrawn: it must never run.
    await producer.submit(key, apiPayload('s2', 'never'), 'queue');
    await mailbox.withdraw(jobIdFor('api', 's2'));
    // Withdrawn while running: the turn is aborted as a stop.
    await mailbox.withdraw(jobIdFor('api', 's1'));
    await control.publish({ type: 'withdraw', sessionKey: key, entryId: jobIdFor('api', 's1') });
    await producer.submit(key, apiPayload('s3', 'after'), 'queue');
    await until(() => ended.length === 3);
    expect(aborts).toEqual(['stop']);
    expect(ran).toEqual(['slow', 'after']);
    expect(ended).toEqual(['slow', 'never', 'after']);
  });
});
