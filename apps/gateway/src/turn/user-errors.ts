/**
 * Short, actionable texts for what went wrong, never a stack trace: one for each provider error kind, and one
 * for anything a turn throws (named by its type, so a bug report has something to go on).
 */
import { FencedOutError, ProviderError, StoreBusyError, isTransientStoreError, type ProviderErrorKind, type SessionStore } from '@herald/agent-core';
import type { PlatformEgress } from '@herald/adapters';
import { TurnAbort, type TurnContext, type TurnResult } from '../queue/worker.js';
import { SessionModelError } from '../features/sessions/models.js';
import { ModelNotConfiguredError } from '../support/config/providers.js';
import { DeliveryError, deliver } from '../out/send-reply.js';

export function userFacingError(kind: ProviderErrorKind | string): string {
  switch (kind) {
    case 'context_overflow':
    case 'payload_too_large':
      return '⚠️ This conversation is too long for the model. Send /compress to summarise it, or /new to start fresh.';
    case 'auth':
      return '⚠️ The AI provider refused our credentials. Ask the bot admin to check the API key.';
    case 'rate_limit':
      return '⏳ The AI provider is rate limiting us. Please try again in a minute.';
    case 'overloaded':
      return '⏳ The AI provider is overloaded right now. Please try again shortly.';
    case 'model_not_found':
      return '⚠️ The configured model was not found. Ask the bot admin to check HERALD_MODEL (or pick another with /model).';
    case 'timeout':
    case 'server_error':
      return '⚠️ The AI provider did not answer properly. Please try again.';
    default:
      return `⚠️ Something went wrong (${kind}). Please try again.`;
  }
}

/** The reply for an exception thrown by a turn (the loop reports provider errors itself; this is the rest). */
export function turnFailureReply(err: unknown): string {
  if (err instanceof ProviderError) return userFacingError(err.kind);
  if (err instanceof SessionModelError || err instanceof ModelNotConfiguredError) {
    return '⚠️ The model chosen for this conversation cannot be used right now. Pick another with /model, or /model default.';
  }
  if (err instanceof StoreBusyError) return '⏳ I am very busy right now. Please send that again in a moment.';
  return userFacingError(err instanceof Error ? err.name : typeof err);
}

export interface FailureReplyDeps {
  store: SessionStore;
  egress: (platform: string, account?: string) => PlatformEgress;
  deliveryBaseDelayMs?: number;
}

/**
 * The user-facing errors policy (turn/pipeline.ts): an exception (a bug, a model that cannot be built) still ends
 * in one short reply instead of silence — unless the turn was stopped, interrupted or handed over (nothing may be
 * sent then), delivery itself failed (delivery already told the user), or the store is down: that error goes on to
 * the store-outage policy outside this one, which runs the turn again once the database answers.
 */
export async function answerFailure(deps: FailureReplyDeps, ctx: TurnContext, run: () => Promise<TurnResult | void>): Promise<TurnResult | void> {
  try {
    return await run();
  } catch (err) {
    // A newer worker owns the turn now (this one lost the session, or the watchdog gave up on it): say nothing.
    if (err instanceof FencedOutError) {
      ctx.log.info('turn taken over by a newer worker; stopping without writing or sending');
      return;
    }
    // A store outage is not the turn's failure: the worker runs it again once the database answers.
    if (ctx.signal.aborted || err instanceof TurnAbort || err instanceof DeliveryError || isTransientStoreError(err)) throw err;
    ctx.log.error({ err }, 'turn failed; telling the user');
    return tellUser(deps, ctx, err);
  }
}

/** The short failure reply, delivered and recorded (the turn ends failed); never throws. */
async function tellUser(deps: FailureReplyDeps, ctx: TurnContext, err: unknown): Promise<TurnResult | void> {
  const last = ctx.entries[ctx.entries.length - 1].payload;
  try {
    if (!(await ctx.canDeliver())) return;
    const ids = await deliver(deps.egress(last.platform, last.account), last.conversationId, turnFailureReply(err), {
      replyTo: last.platformMessageId,
      baseDelayMs: deps.deliveryBaseDelayMs,
    });
    if (await deps.store.getTurn(ctx.turnId)) {
      await deps.store.markDelivered(ctx.turnId, ids);
      await deps.store.markTurn(ctx.turnId, 'failed', ctx.fence, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
      return { outcome: { kind: 'failed', compressions: 0 } };
    }
  } catch (notice) {
    ctx.log.warn({ err: notice }, 'could not tell the user the turn failed');
  }
}
