/**
 * Sending a turn's recorded reply, fenced: the outbox row is claimed under this worker's fencing token before
 * anything goes out (a worker that lost the session can claim nothing), every chunk is recorded as the platform
 * takes it (a re-run continues after it), a streamed reply is finished in its own message, and a re-run that
 * finds an earlier send attempt asks the platform to recognise what was sent already. Where the platform cannot
 * (Telegram), the possible duplicate is logged and counted instead: at most the one chunk in flight at the crash.
 *
 * Every send to a platform's REST side, the reply's and any other (a notice, a question), goes through `deliver`,
 * from any worker: retries on network errors, one plain-text resend when the platform rejects formatting, then one
 * short "delivery failed" notice. Adapters already honour the platform's own rate-limit waits; what reaches here
 * is a typed error.
 */
import { FormattingError, NetworkError, PlatformError, RateLimitedError, type PlatformEgress, type SendOptions } from '@herald/adapters';
import type { SessionStore, Turn } from '@herald/agent-core';
import type { DeliveryCheck } from '../queue/mailbox.js';
import type { TurnContext } from '../queue/worker.js';
import { deliverFiles } from './deliver-files.js';
import { DELIVERY_BASE_DELAY_MS, DELIVERY_RETRIES } from './limits.js';
import { untilStored } from './until-stored.js';
import { setTimeout as sleep } from 'node:timers/promises';

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

export interface ReplyTarget {
  store: SessionStore;
  egress: PlatformEgress;
  ctx: TurnContext;
  /** The turn's live display (out/progress.ts LiveTurn): a streamed reply is finished in its message (the ids), else null. */
  live: { finish(text: string): Promise<string[] | null> };
  conversationId: string;
  /** The user's message the reply answers; absent for a scheduled task's run. */
  replyTo?: string;
  deliveryBaseDelayMs?: number;
  /** A platform that cannot recognise its own earlier send got the reply (or its chunk in flight) again. */
  onPossibleDuplicate: (platform: string) => void;
  /**
   * The turn's send attempts when this worker took it over (beginTurn). 0: nobody can be sending it — a worker that
   * claims later is fenced out — so there is no earlier sender to wait for (and no read to make).
   */
  sendAttemptsAtBegin: number;
}

export type SendOutcome = 'delivered' | 'stale' | 'lock lost' | 'nothing to send';

/**
 * The delivery check made before the reply was recorded (null: Redis could not answer it then), and the turn as that
 * record left it. When the check said 'ok', the record claimed the reply for sending (recordReply's `claim`), so the
 * send needs neither again; with null it makes both itself.
 */
export interface CheckedReply {
  check: DeliveryCheck | null;
  recorded: Turn;
}

/**
 * The delivery check made before a reply is recorded, so that the record can claim it (stages/finish.ts): null when
 * Redis could not answer just now — the reply is then recorded unclaimed, and the send checks again.
 */
export function checkBeforeRecord(ctx: Pick<TurnContext, 'deliveryCheck'>): Promise<DeliveryCheck | null> {
  return ctx.deliveryCheck().catch(() => null);
}

export async function sendReply(t: ReplyTarget, text: string, checked?: CheckedReply): Promise<SendOutcome> {
  const { store, ctx, egress } = t;
  const check = checked?.check ?? (await ctx.deliveryCheck());
  if (check === 'stale') {
    await store.markTurn(ctx.turnId, 'interrupted', ctx.fence, 'superseded before delivery');
    ctx.log.info('reply is stale (interrupted or session stopped); not sending it');
    return 'stale';
  }
  if (check === 'lock_lost') {
    // Not the user's doing: the worker that holds the session now answers this turn. Write nothing here.
    ctx.log.info('session lock lost before delivery; the turn is left to the worker that holds it now');
    return 'lock lost';
  }
  const claim = checked?.check === 'ok' ? checked.recorded : await claimReply(t);
  if (!claim) return 'nothing to send';
  const earlier = claim.sendAttempts > 1;
  if (earlier) {
    ctx.log.warn(
      { recorded: claim.deliveredIds.length, safety: egress.duplicateSafety },
      'an earlier attempt began sending this reply; continuing after what it recorded',
    );
    if (egress.duplicateSafety === 'none') {
      ctx.log.warn({ platform: egress.platform }, 'reply may have been sent twice (a crash between sending and recording; this platform cannot tell)');
      t.onPossibleDuplicate(egress.platform);
    }
  }
  // What is recorded as delivered so far: each record compares against it, so none needs a read first.
  let recorded = claim.deliveredIds;
  // A streamed reply is finished by editing the streamed message: the text is never delivered twice.
  const ids =
    (await t.live.finish(text)) ??
    (await deliver(egress, t.conversationId, text, {
      replyTo: t.replyTo,
      baseDelayMs: t.deliveryBaseDelayMs,
      skipChunks: claim.deliveredIds.length,
      idempotencyKey: ctx.turnId,
      recover: earlier,
      onChunkSent: async (_index, id, last) => {
        // The final chunk of a reply without files is recorded by markDelivered just below, in the same write.
        if (last && claim.fileCount === 0) return;
        recorded = (await untilStored(() => store.recordChunk(ctx.turnId, id, recorded), ctx.log, 'record a delivered chunk')).deliveredIds;
      },
    }));
  // The files the reply carries follow its text, each recorded as it goes (out/deliver-files.ts).
  if (claim.fileCount > 0) {
    await deliverFiles({
      store,
      egress,
      conversationId: t.conversationId,
      turnId: ctx.turnId,
      log: ctx.log,
      touch: ctx.touch,
      baseDelayMs: t.deliveryBaseDelayMs,
    });
  }
  // The platform has the reply: its record must not be lost to a database hiccup (a re-run would send it again).
  await untilStored(() => store.markDelivered(ctx.turnId, ids, recorded), ctx.log, 'record the delivered reply');
  return 'delivered';
}

/** The send intent of a reply recorded earlier: null when there is nothing (left) to send. */
async function claimReply(t: ReplyTarget): Promise<Turn | null> {
  const { store, ctx } = t;
  // An earlier owner that lost the session may still be sending: give it a moment to report what it sent.
  if (t.sendAttemptsAtBegin > 0 && !(await earlierSenderSettled(store, ctx))) return null;
  // Only the fence that owns the turn may send, and the attempt is counted.
  return store.claimDelivery(ctx.turnId, ctx.fence);
}

/** How long an earlier send attempt counts as possibly still in flight after its last recorded step. */
export const EARLIER_SEND_SETTLE_MS = 5_000;
const SETTLE_POLL_MS = 200;

/**
 * False when the turn got delivered meanwhile. An earlier attempt (sendAttempts > 0) whose last step is recent may
 * belong to a worker that is alive but lost the session (a stall, a partition): it still records each chunk it
 * gets out (deliveries are recorded whatever the fence). Waiting until it has been quiet for a few seconds turns
 * its sends into recorded ones, leaving only a real crash as the source of a possible duplicate.
 */
async function earlierSenderSettled(store: SessionStore, ctx: TurnContext): Promise<boolean> {
  for (;;) {
    const turn = await store.getTurn(ctx.turnId);
    if (turn?.status !== 'replied') return turn?.status !== 'delivered';
    if (turn.sendAttempts === 0 || Date.now() - turn.updatedAt >= EARLIER_SEND_SETTLE_MS || ctx.signal.aborted) return true;
    ctx.touch();
    await sleep(SETTLE_POLL_MS);
  }
}
