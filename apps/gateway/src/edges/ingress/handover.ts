/**
 * The boundary where every adapter hands its InboundMessages to the router, for all platforms alike:
 *
 * - Order: messages of one conversation reach the router one at a time, in the order the adapters gave them,
 *   even while an earlier one is being retried (a KeyedSerial keyed by conversation id). Other conversations
 *   are not held up.
 * - Retries: this is the one place a hand-over is retried. Platforms do not all redeliver (a Discord gateway
 *   event, an acknowledged Slack event), so a message the router could not take (Redis briefly away) is tried
 *   again while it is still in memory, with a growing wait, for up to HANDOVER_PATIENCE_MS; adapters do not
 *   retry on top of it (a Telegram update just stays unconfirmed until this settles). Retrying is safe: the
 *   mailbox drops a platform message it already took, so a retry after a half-finished attempt makes no
 *   second turn.
 * - Shutdown: the signal ends the waiting at once and the message is given up (a Telegram update is then left
 *   unconfirmed, so the next start fetches it again); a message handed in after it gets one attempt.
 */
import pRetry from 'p-retry';
import { KeyedSerial, NetworkError, PlatformError, RateLimitedError, type InboundHandler, type InboundMessage } from '@herald/adapters';
import type { Logger } from '../../support/logger.js';

/** How long one message is retried before it is given up; covers a Redis restart or a short outage. */
const HANDOVER_PATIENCE_MS = 5 * 60_000;
const FIRST_WAIT_MS = 500;
const MAX_WAIT_MS = 30_000;

export interface HandoverOptions {
  patienceMs?: number;
  firstWaitMs?: number;
  maxWaitMs?: number;
  /** Ends the waiting early (shutdown); the message is then given up. */
  signal?: AbortSignal;
}

export class InboundBoundary {
  private readonly serial = new KeyedSerial();

  constructor(
    private readonly route: InboundHandler,
    private readonly log: Logger,
    private readonly opts: HandoverOptions = {},
  ) {}

  /** What the adapters are given: resolves once the router took the message, rejects once it was given up. */
  readonly handle: InboundHandler = (msg) => this.serial.run(msg.conversationId, () => this.handOver(msg));

  /** Resolves when every message handed in so far has been taken or given up. */
  idle(): Promise<void> {
    return this.serial.idle();
  }

  private async handOver(msg: InboundMessage): Promise<void> {
    const log = this.log.child({ platform: msg.platform, messageId: msg.messageId });
    const attempt = (): Promise<void> => this.route(msg);
    try {
      // Already shutting down (a stopping adapter handing over what it still held): one attempt, no waiting.
      if (this.opts.signal?.aborted) return await attempt();
      await pRetry(attempt, {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: this.opts.firstWaitMs ?? FIRST_WAIT_MS,
        maxTimeout: this.opts.maxWaitMs ?? MAX_WAIT_MS,
        maxRetryTime: this.opts.patienceMs ?? HANDOVER_PATIENCE_MS,
        signal: this.opts.signal,
        shouldRetry: ({ error }) => worthRetrying(error),
        onFailedAttempt: ({ error, attemptNumber, retryDelay }) => {
          if (retryDelay > 0 && worthRetrying(error)) log.warn({ err: error, attempt: attemptNumber, waitMs: retryDelay }, 'message not taken yet; retrying');
        },
      });
    } catch (err) {
      // A platform refusing the router's answer (a chat that is gone, a room the bot is not in) is the platform's
      // word on that chat, not a fault here: a warning with its reason. Anything else is an error with its stack.
      if (err instanceof PlatformError && !worthRetrying(err)) {
        log.warn({ platformError: err.message }, 'the platform refused the answer to this message; giving up on it');
      } else log.error({ err }, 'message could not be taken; giving up on it');
      throw err;
    }
  }
}

/**
 * Everything is retried (Redis and the database fail in many shapes) except a platform refusing what the router
 * sent back (a reply to a chat that is gone, a revoked token): the same reply would be refused again, and the
 * conversation's later messages wait behind this one.
 */
function worthRetrying(err: Error): boolean {
  return !(err instanceof PlatformError) || err instanceof NetworkError || err instanceof RateLimitedError;
}
