/**
 * Sending a reply through a platform's REST side, from any worker: retries on network errors, one plain-text
 * resend when the platform rejects formatting, then one short "delivery failed" notice.
 * Adapters already honour the platform's own rate-limit waits; what reaches here is a typed error.
 */
import { FormattingError, NetworkError, PlatformError, RateLimitedError, type PlatformEgress, type SendOptions } from '@herald/adapters';
import { setTimeout as sleep } from 'node:timers/promises';

export const DELIVERY_RETRIES = 2;
export const DELIVERY_BASE_DELAY_MS = 2_000;
export const DELIVERY_FAILED_NOTICE = '⚠️ I could not deliver my reply. Please try again.';

export interface DeliveryOptions extends SendOptions {
  /** Base of the 2 s × 2ⁿ backoff; tests shrink it. */
  baseDelayMs?: number;
}

export class DeliveryError extends Error {
  override name = 'DeliveryError';
}

export async function deliver(egress: PlatformEgress, conversationId: string, text: string, opts: DeliveryOptions = {}): Promise<string[]> {
  const base = opts.baseDelayMs ?? DELIVERY_BASE_DELAY_MS;
  let plain = opts.plain ?? false;
  let lastErr: unknown;
  // Chunks that reached the user in an earlier attempt: the retry continues after them, never repeats them.
  const delivered: string[] = [];
  for (let attempt = 0; attempt <= DELIVERY_RETRIES; attempt++) {
    try {
      const sent = await egress.send(conversationId, text, {
        replyTo: opts.replyTo,
        plain,
        // Chunks recorded by an earlier run, then those this call got out before a failed attempt.
        skipChunks: (opts.skipChunks ?? 0) + delivered.length,
        idempotencyKey: opts.idempotencyKey,
        recover: opts.recover,
        onChunkSent: opts.onChunkSent,
        buttons: opts.buttons,
      });
      return [...delivered, ...sent.messageIds];
    } catch (err) {
      lastErr = err;
      if (err instanceof PlatformError) delivered.push(...err.sentIds);
      if (err instanceof FormattingError && !plain) {
        plain = true; // one plain-text resend, not counted as a retry
        attempt--;
        continue;
      }
      if (!(err instanceof NetworkError || err instanceof RateLimitedError) || attempt === DELIVERY_RETRIES) break;
      const wait = err instanceof RateLimitedError ? err.retryAfterMs : base * 2 ** attempt + Math.random() * base * 0.25;
      await sleep(wait);
    }
  }
  // Tell the user once, best effort: the notice is short and plain, so it goes through where the reply did not.
  await egress.send(conversationId, DELIVERY_FAILED_NOTICE, { plain: true }).catch(() => undefined);
  throw new DeliveryError(`delivery failed: ${lastErr instanceof Error ? lastErr.message : String(lastErr)}`, { cause: lastErr });
}
