/**
 * What the router asks about every message before anything else happens to it: may its sender talk to the agent at
 * all (admit, below), then, for an authorised one, count it and hold
 * back a user who is over HERALD_USER_RATE_LIMIT. Commands (/stop above all) are never held back: a user who
 * flooded the bot must still be able to stop it.
 *
 * The limit (UserRateLimiter, also the HTTP API's) is per user in Redis, shared by every ingress process: a sliding
 * one-minute window of accepted messages per user. Over the limit the user gets one polite notice, then silence
 * until a slot frees up. One Lua script does the whole decision atomically with Redis' own clock, so two ingress
 * processes never both admit the 21st message and clock skew between machines does not matter. A message already
 * in the window (a platform redelivery) is admitted again without counting twice: the mailbox drops the duplicate.
 */
import type { InboundMessage, Platform } from '@herald/adapters';
import type { HeraldConfig } from '../../support/config/load.js';
import { HERALD_COMMAND } from '../../support/herald-command.js';
import type { PairingRequestResult, PairingService } from '../../features/pairing/index.js';
import type { Logger } from '../../support/logger.js';
import type { HeraldMetrics } from '../../support/ops/metrics.js';
import type { Redis } from 'ioredis';

export interface InboundGuard {
  /**
   * True: go on. False: stop here; the guard already said what needed saying (at most one notice). `isCommand`: the
   * router parsed the text as a command (never held back).
   */
  admit(msg: InboundMessage, reply: (text: string) => Promise<unknown>, isCommand: boolean): Promise<boolean>;
}

export function createInboundGuard(deps: { metrics?: HeraldMetrics; limiter?: UserRateLimiter; log: Logger }): InboundGuard {
  return {
    async admit(msg, reply, isCommand) {
      deps.metrics?.messagesReceived.inc({ platform: msg.platform });
      if (!deps.limiter || isCommand) return true;
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

/**
 * Who may talk to the agent (Hermes' rules): a platform's allowlist, the global allowlist, an allow-all switch,
 * or an approved pairing. With nothing set, everyone is denied (and start-up warns once).
 *
 * Every message goes through `admit` before anything else — commands and messages to a busy session included —
 * so nobody can stop, inspect or steer someone else's conversation.
 */
export interface AccessPolicy {
  isAllowed(platform: Platform, userId: string): Promise<boolean>;
  /** True when no allowlist and no allow-all switch is set anywhere: nobody gets in (but pairing). */
  readonly lockedDown: boolean;
}

export function accessPolicy(config: HeraldConfig, approved?: (platform: Platform, userId: string) => Promise<boolean>): AccessPolicy {
  const perPlatform = {
    telegram: { all: config.telegram.allowAllUsers, users: new Set(config.telegram.allowedUsers) },
    discord: { all: config.discord.allowAllUsers, users: new Set(config.discord.allowedUsers) },
    slack: { all: config.slack.allowAllUsers, users: new Set(config.slack.allowedUsers) },
    whatsapp: { all: config.whatsapp.allowAllUsers, users: new Set(config.whatsapp.allowedUsers) },
    matrix: { all: config.matrix.allowAllUsers, users: new Set(config.matrix.allowedUsers) },
  };
  const global = { all: config.gateway.allowAllUsers, users: new Set(config.gateway.allowedUsers) };
  const lockedDown = !global.all && global.users.size === 0 && Object.values(perPlatform).every((p) => !p.all && p.users.size === 0);
  return {
    lockedDown,
    async isAllowed(platform, userId) {
      const p = perPlatform[platform];
      if (global.all || p.all || global.users.has(userId) || p.users.has(userId)) return true;
      return approved ? approved(platform, userId) : false;
    },
  };
}

export interface AdmitDeps {
  policy: AccessPolicy;
  /** Hands an unknown user's DM a pairing code. */
  pairing: PairingService;
  log: Logger;
}

/**
 * True when the message may go on. Otherwise it has been dealt with: an unknown user's DM is answered with a
 * pairing code (or why there is none), anything in a group gets silence, so strangers cannot make the bot talk
 * in other people's channels.
 */
export async function admit(deps: AdmitDeps, msg: InboundMessage, reply: (text: string) => Promise<unknown>): Promise<boolean> {
  if (await deps.policy.isAllowed(msg.platform, msg.userId)) return true;
  const log = deps.log.child({ platform: msg.platform, userId: msg.userId, chatType: msg.chatType });
  if (msg.chatType !== 'dm') {
    log.info('message from an unauthorised user ignored');
    return false;
  }
  const res = await deps.pairing.request(msg.platform, msg.userId, msg.userName);
  if (res.status === 'already_approved') return true; // approved between the two checks
  log.info({ pairing: res.status }, 'unauthorised DM: pairing');
  await reply(pairingReply(msg.platform, res));
  return false;
}

function pairingReply(platform: Platform, res: Exclude<PairingRequestResult, { status: 'already_approved' }>): string {
  switch (res.status) {
    case 'issued':
      return [
        "👋 I don't know you yet. Your pairing code is:",
        '',
        res.code,
        '',
        `Ask the owner of this bot to approve it within an hour: ${HERALD_COMMAND} pairing approve ${platform} ${res.code}`,
      ].join('\n');
    case 'rate_limited':
      return `I sent you a pairing code a few minutes ago; ask the bot's owner to approve it. You can ask for a new one in ${Math.ceil(res.retryAfterMs / 60_000)} min.`;
    case 'too_many_pending':
      return 'Too many people are waiting for approval right now. Please try again later.';
    case 'locked':
      return `Pairing is paused after too many wrong codes. Please try again in ${Math.ceil(res.retryAfterMs / 60_000)} min.`;
  }
}
