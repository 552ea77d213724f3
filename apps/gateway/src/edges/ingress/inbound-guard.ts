/**
 * What the router asks about every authorised message before anything else happens to it: count it, and hold
 * back a user who is over HERALD_USER_RATE_LIMIT. Commands (/stop above all) are never held back: a user who
 * flooded the bot must still be able to stop it.
 *
 * The limit (UserRateLimiter, also the HTTP API's) is per user in Redis, shared by every ingress process: a sliding
 * one-minute window of accepted messages per user. Over the limit the user gets one polite notice, then silence
 * until a slot frees up. One Lua script does the whole decision atomically with Redis' own clock, so two ingress
 * processes never both admit the 21st message and clock skew between machines does not matter. A message already
 * in the window (a platform redelivery) is admitted again without counting twice: the mailbox drops the duplicate.
 */
import type { InboundMessage } from '@herald/adapters';
import type { Logger } from '../../support/logger.js';
import { parseCommand } from '../commands/registry.js';
import type { HeraldMetrics } from '../../support/ops/metrics.js';
import type { Redis } from 'ioredis';

export interface InboundGuard {
  /** True: go on. False: stop here; the guard already said what needed saying (at most one notice). */
  admit(msg: InboundMessage, reply: (text: string) => Promise<unknown>): Promise<boolean>;
}

export function createInboundGuard(deps: { metrics?: HeraldMetrics; limiter?: UserRateLimiter; log: Logger }): InboundGuard {
  return {
    async admit(msg, reply) {
      deps.metrics?.messagesReceived.inc({ platform: msg.platform });
      if (!deps.limiter || parseCommand(msg.text)) return true;
      let decision: Awaited<ReturnType<UserRateLimiter['check']>>;
      try {
        // An album or a split text is one message to the user, however many parts it came in: its parts count once.
        decision = await deps.limiter.check(msg.platform, msg.userId, msg.partOf !== undefined ? `${msg.partOf.kind}:${msg.partOf.id}` : msg.messageId);
      } catch (err) {
        // Redis trouble: let the message through; the queue reports the outage if it is real.
        deps.log.warn({ err, platform: msg.platform }, 'rate limit check failed; message let through');
        return true;
      }
      if (decision.allowed) return true;
      deps.metrics?.rateLimited.inc({ platform: msg.platform });
      deps.log.info({ platform: msg.platform, userId: msg.userId, notified: decision.notify }, 'message over the user rate limit dropped');
      if (decision.notify) await reply(rateLimitNotice(deps.limiter.limit, decision.retryAfterMs)).catch(() => undefined);
      return false;
    },
  };
}

const RATE_WINDOW_MS = 60_000;

export type RateDecision =
  | { allowed: true }
  /** `notify`: the first refusal of this spell; later ones are silent. */
  | { allowed: false; notify: boolean; retryAfterMs: number };

const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return {1, 0, 0} end
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local retry = math.max(tonumber(oldest[2]) + window - now, 1)
local first = redis.call('SET', KEYS[2], '1', 'NX', 'PX', retry)
return {0, retry, first and 1 or 0}
`;

export class UserRateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** Messages per window; 0 turns the limit off. */
    readonly limit: number,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  /** Records the message when it is admitted. `messageId` makes a redelivered message count once. */
  async check(platform: string, userId: string, messageId: string): Promise<RateDecision> {
    if (this.limit <= 0) return { allowed: true };
    const base = `${this.prefix}:ratelimit:${platform}:${userId}`;
    const [ok, retry, first] = (await this.redis.eval(SCRIPT, 2, base, `${base}:noticed`, this.windowMs, this.limit, messageId)) as [number, number, number];
    return ok === 1 ? { allowed: true } : { allowed: false, notify: first === 1, retryAfterMs: retry };
  }
}

/** The one notice a user gets when they go over the limit. */
export function rateLimitNotice(limit: number, retryAfterMs: number): string {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return (
    `⏳ You're sending messages faster than I can take them (limit: ${limit} per minute). ` +
    `Please wait about ${seconds} s; messages sent before then are not answered.`
  );
}
