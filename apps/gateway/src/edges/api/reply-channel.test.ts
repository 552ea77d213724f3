/**
 * The API's return path on real Redis: events arrive in order from a publisher that may batch them, and a request
 * whose wake-up calls were lost (its subscriber away) still gets everything from the stream.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplyListener, ReplyPublisher, replyStreamKey, type ReplyEvent } from './reply-channel.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';

const URL = 'redis://127.0.0.1:6379';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(pollMs = 5_000) {
  const prefix = testPrefix('replies');
  const redis = new Redis(URL);
  const sub = new Redis(URL);
  const listener = new ReplyListener(redis, sub, prefix, pino({ level: 'silent' }), pollMs);
  await listener.start();
  cleanups.push(async () => {
    await listener.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    sub.disconnect();
    redis.disconnect();
  });
  return { redis, prefix, listener, publisher: new ReplyPublisher(redis, prefix) };
}

async function until(fn: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('API reply channel', () => {
  it('delivers every event in order, however the publisher batched them; unwatching drops the stream', async () => {
    const { redis, prefix, listener, publisher } = await rig();
    const got: ReplyEvent[] = [];
    listener.watch('req1', (events) => got.push(...events));
    const sent: ReplyEvent[] = Array.from({ length: 200 }, (_, i) => ({ t: 'delta', text: `${i} ` }));
    await Promise.all([...sent.map((e) => publisher.publish('req1', e)), publisher.publish('req1', { t: 'end' })]);
    await until(() => got.length === 201);
    expect(got).toEqual([...sent, { t: 'end' }]);
    await listener.unwatch('req1');
    expect(await redis.exists(replyStreamKey(prefix, 'req1'))).toBe(0);
  });

  it('events written before the request watched, or whose wake-up call was lost, are read from the stream', async () => {
    const { redis, prefix, listener, publisher } = await rig(100);
    await publisher.publish('early', { t: 'message', text: 'already here', final: true });
    const got: ReplyEvent[] = [];
    listener.watch('early', (events) => got.push(...events));
    await until(() => got.length === 1);
    expect(got).toEqual([{ t: 'message', text: 'already here', final: true }]);
    // Appended without a wake-up (as if it was published while the subscriber was reconnecting): the poll finds it.
    await redis.xadd(replyStreamKey(prefix, 'early'), '*', 'e', JSON.stringify({ t: 'end' }));
    await until(() => got.length === 2);
    expect(got[1]).toEqual({ t: 'end' });
  });
});
