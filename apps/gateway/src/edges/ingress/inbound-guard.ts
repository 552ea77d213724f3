/**
 * What the router asks about every authorised message before anything else happens to it: count it, and hold
 * back a user who is over HERALD_USER_RATE_LIMIT. Commands (/stop above all) are never held back: a user who
 * flooded the bot must still be able to stop it.
 */
import type { InboundMessage } from '@herald/adapters';
import type { Logger } from '../../support/logger.js';
import { parseCommand } from '../commands/registry.js';
import type { HeraldMetrics } from '../../support/ops/metrics.js';
import { rateLimitNotice, type UserRateLimiter } from '../../support/ops/rate-limit.js';

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
