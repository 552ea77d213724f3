/**
 * Platforms do not all redeliver: a Discord gateway event or an acknowledged Slack event that the router could
 * not take (Redis briefly away) would be gone. So the handler the adapters call retries, while the message is
 * still in memory, with a growing wait, before it gives up. Retrying is safe: the mailbox drops a platform
 * message it already took, so a retry after a half-finished attempt makes no second turn.
 */
import type { InboundHandler, InboundMessage } from '@herald/adapters';
import type { Logger } from '../logger.js';

export const HANDOVER_ATTEMPTS = 8;
const FIRST_WAIT_MS = 500;
const MAX_WAIT_MS = 60_000;

export interface HandoverOptions {
  attempts?: number;
  firstWaitMs?: number;
  /** Ends the waiting early (shutdown); the message is then given up. */
  signal?: AbortSignal;
}

export function withHandoverRetry(handle: InboundHandler, log: Logger, opts: HandoverOptions = {}): InboundHandler {
  const attempts = opts.attempts ?? HANDOVER_ATTEMPTS;
  const first = opts.firstWaitMs ?? FIRST_WAIT_MS;
  return async (msg: InboundMessage) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await handle(msg);
        return;
      } catch (err) {
        if (attempt >= attempts || opts.signal?.aborted) {
          log.error({ err, platform: msg.platform, messageId: msg.messageId, attempts: attempt }, 'message could not be taken; giving up on it');
          throw err;
        }
        const wait = Math.min(first * 2 ** (attempt - 1), MAX_WAIT_MS);
        log.warn({ err, platform: msg.platform, messageId: msg.messageId, attempt, waitMs: wait }, 'message not taken yet; retrying');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          opts.signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
  };
}
