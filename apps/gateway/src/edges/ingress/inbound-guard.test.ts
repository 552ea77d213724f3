/**
 * The per-user rate limit against the real Redis: what a user over the limit experiences, shared across
 * ingress processes (two limiter instances on one prefix), and recovery when the window passes.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestRedis } from '../../../../../test/helpers/redis.js';
import type { InboundMessage, MessagePart } from '@herald/adapters';
import { pino } from 'pino';
import { createInboundGuard, rateLimitNotice, UserRateLimiter } from './inbound-guard.js';

const { redis, prefix } = useTestRedis('ratelimit');
let other: Redis;

beforeAll(() => {
  other = new Redis('redis://127.0.0.1:6379');
});
afterAll(() => other.disconnect());

describe('UserRateLimiter', () => {
  it('admits the limit, then refuses: the first refusal asks for a notice, later ones are silent', async () => {
    const rl = new UserRateLimiter(redis, prefix, 3);
    const decisions = [];
    for (let i = 1; i <= 6; i++) decisions.push(await rl.check('telegram', 'u1', `m${i}`));
    expect(decisions.slice(0, 3)).toEqual([{ allowed: true }, { allowed: true }, { allowed: true }]);
    expect(decisions[3]).toMatchObject({ allowed: false, notify: true });
    expect(decisions[4]).toMatchObject({ allowed: false, notify: false });
    expect(decisions[5]).toMatchObject({ allowed: false, notify: false });
    const retry = (decisions[3] as { retryAfterMs: number }).retryAfterMs;
    expect(retry).toBeGreaterThan(50_000);
    expect(retry).toBeLessThanOrEqual(60_000);
    // Other users and other platforms are counted apart.
    expect(await rl.check('telegram', 'u2', 'm1')).toEqual({ allowed: true });
    expect(await rl.check('slack', 'u1', 'm1')).toEqual({ allowed: true });
  });

  it('a redelivered message is admitted again without using a second slot', async () => {
    const rl = new UserRateLimiter(redis, prefix, 2);
    expect(await rl.check('discord', 'u3', 'same')).toEqual({ allowed: true });
    expect(await rl.check('discord', 'u3', 'same')).toEqual({ allowed: true });
    expect(await rl.check('discord', 'u3', 'next')).toEqual({ allowed: true });
    expect(await rl.check('discord', 'u3', 'third')).toMatchObject({ allowed: false });
  });

  it('two ingress processes share one count', async () => {
    const a = new UserRateLimiter(redis, prefix, 2);
    const b = new UserRateLimiter(other, prefix, 2);
    const results = await Promise.all([a.check('slack', 'u4', '1'), b.check('slack', 'u4', '2'), a.check('slack', 'u4', '3'), b.check('slack', 'u4', '4')]);
    expect(results.filter((r) => r.allowed)).toHaveLength(2);
    expect(results.filter((r) => !r.allowed && r.notify)).toHaveLength(1);
  });

  it('admits again once the oldest message leaves the window, and notices again on the next spell', async () => {
    // A window long enough that c and d (two calls in a row) fall in one even on a loaded machine.
    const rl = new UserRateLimiter(redis, prefix, 1, 1_000);
    expect(await rl.check('telegram', 'u5', 'a')).toEqual({ allowed: true });
    expect(await rl.check('telegram', 'u5', 'b')).toMatchObject({ allowed: false, notify: true });
    // Time passing is the subject here: a deliberate wait past the window, not a race.
    await new Promise((r) => setTimeout(r, 1_050));
    expect(await rl.check('telegram', 'u5', 'c')).toEqual({ allowed: true });
    expect(await rl.check('telegram', 'u5', 'd')).toMatchObject({ allowed: false, notify: true });
  });

  it('a limit of 0 turns it off', async () => {
    const rl = new UserRateLimiter(redis, prefix, 0);
    for (let i = 0; i < 50; i++) expect(await rl.check('telegram', 'u6', String(i))).toEqual({ allowed: true });
  });

  it('the notice says the limit and how long to wait', () => {
    expect(rateLimitNotice(20, 41_200)).toBe(
      "⏳ You're sending messages faster than I can take them (limit: 20 per minute). Please wait about 42 s; messages sent before then are not answered.",
    );
  });
});

describe('createInboundGuard', () => {
  it('counts the parts of an album, and of a split text, once: a ten-picture album leaves room for the next message', async () => {
    const guard = createInboundGuard({ limiter: new UserRateLimiter(redis, prefix, 3), log: pino({ level: 'silent' }) });
    const msg = (n: number, partOf?: MessagePart): InboundMessage => ({
      platform: 'telegram',
      messageId: `9:${n}`,
      conversationId: 'telegram:9',
      chatType: 'dm',
      chatId: '9',
      userId: 'album-user',
      text: '',
      attachments: [],
      platformMessageId: String(n),
      sentAt: 0,
      ...(partOf !== undefined && { partOf }),
    });
    const replies: string[] = [];
    const reply = async (t: string): Promise<void> => void replies.push(t);
    for (let n = 1; n <= 10; n++) expect(await guard.admit(msg(n, { id: 'g-1', kind: 'album' }), reply, false)).toBe(true);
    expect(await guard.admit(msg(11, { id: '9:11', kind: 'text' }), reply, false)).toBe(true);
    expect(await guard.admit(msg(12, { id: '9:11', kind: 'text', last: true }), reply, false)).toBe(true);
    expect(await guard.admit(msg(13), reply, false)).toBe(true);
    expect(await guard.admit(msg(14), reply, false)).toBe(false);
    expect(replies).toHaveLength(1);
  });
});
