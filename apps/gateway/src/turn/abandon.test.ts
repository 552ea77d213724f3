import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { PlatformEgress, SendOptions } from '@herald/adapters';
import { FencedOutError } from '@herald/agent-core';
import { useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import { Mailbox, type MailboxEntry } from '../queue/mailbox.js';
import { ABANDONED_NOTICE, abandonTurns } from './abandon.js';
import { testPrefix } from '../../../../test/helpers/test-run.js';

const temp = useTempStores('sqlite');
const redis = new Redis('redis://127.0.0.1:6379');
const prefix = testPrefix('abandon');
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe('abandoning a turn the watchdog gave up on', () => {
  it('takes its write and send access away (a newer fence, status failed) and tells the user once', async () => {
    const store = await temp.open();
    const mailbox = new Mailbox(redis, prefix, 2_000);
    const key = 'agent:main:telegram:dm:77';
    const lock = await mailbox.acquire(key, 'w1');
    if (!('token' in lock)) throw new Error('lock unexpectedly held');
    const { session } = await store.getOrCreateSession(key, { source: 'telegram' });
    await store.beginTurn('t-hung', session.id, lock.fence);

    const sent: Array<{ text: string; opts?: SendOptions }> = [];
    const egress = {
      platform: 'telegram',
      maxMessageLength: 4096,
      typingRefreshMs: 4000,
      duplicateSafety: 'none',
      async send(_c: string, text: string, opts?: SendOptions) {
        sent.push({ text, opts });
        return { messageIds: ['n1'] };
      },
      async edit() {},
      async typing() {},
      async react() {},
      voiceFormat: 'ogg_opus',
      async sendFile(): Promise<string> {
        throw new Error('this test sends no files');
      },
    } satisfies PlatformEgress;
    const entry = {
      id: 't-hung',
      sessionKey: key,
      seq: 1,
      enqueuedAt: 0,
      payload: { platform: 'telegram', conversationId: 'telegram:77', platformMessageId: '5' },
    } as MailboxEntry;
    const abandon = abandonTurns({ store, mailbox, egress: () => egress });

    await abandon({ sessionKey: key, turnId: 't-hung', entries: [entry], log: pino({ level: 'silent' }) });
    expect(sent).toEqual([{ text: ABANDONED_NOTICE, opts: expect.objectContaining({ replyTo: '5' }) }]);
    const turn = await store.getTurn('t-hung');
    expect(turn).toMatchObject({ status: 'failed', error: 'abandoned by the watchdog' });
    expect(turn!.fence).toBeGreaterThan(lock.fence);
    // The hung code, should it wake up, can write and send nothing any more.
    await expect(store.recordReply('t-hung', 'too late', lock.fence)).rejects.toThrow(FencedOutError);
    await expect(store.claimDelivery('t-hung', lock.fence)).rejects.toThrow(FencedOutError);
    // A second report of the same turn changes nothing and says nothing again.
    await abandon({ sessionKey: key, turnId: 't-hung', entries: [entry], log: pino({ level: 'silent' }) });
    expect(sent).toHaveLength(1);
  });
});
