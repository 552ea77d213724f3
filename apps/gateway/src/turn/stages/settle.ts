/**
 * Stage 6 — settle: the turn's outcome, from what the stages before returned. A loop error marks the turn failed
 * (its short error text was the reply); the first exchange of a new chat conversation is titled behind the reply,
 * and every N turns the review (stage 7, review.ts) starts behind it;
 * an aborted turn is either handed to another worker (only its spend written) or recorded as interrupted.
 */
import type { ConversationResult } from '@herald/agent-core';
import { TurnAbort } from '../../queue/turn-abort.js';
import type { TurnOutcome, TurnResult } from '../../queue/turn-context.js';
import { TurnSpend } from '../../features/budgets/meter.js';
import { autoTitleEnabled, titleNewSession } from '../../features/llm/auto-title.js';
import type { TurnDeps } from './deps.js';
import { reviewInBackground } from './review.js';
import type { OpenTurn } from './open.js';
import type { LoopPlan } from './plan.js';
import type { PreparedTurn } from './prepare.js';
import { recordInterrupted, type RecordedTurn } from './record.js';
import type { FinishedTurn } from './finish.js';

export interface SettleInput {
  prepared: PreparedTurn;
  plan: LoopPlan;
  result: ConversationResult;
  finished: FinishedTurn;
  recorded: RecordedTurn;
  /** What the deliver stage came to. */
  delivered: TurnResult;
}

export async function settleTurn(deps: TurnDeps, open: OpenTurn, s: SettleInput): Promise<TurnResult> {
  const { ctx } = open;
  const spend = { costUsd: s.prepared.meter.costUsd, apiCalls: s.finished.apiCalls };
  const delivered = s.delivered.outcome ?? { kind: 'unknown', compressions: s.recorded.compressions };
  if (s.result.error) {
    await deps.store.markTurn(ctx.turnId, 'failed', ctx.fence, `${s.result.error.kind}: ${s.result.error.message}`);
    return { ...s.delivered, outcome: { kind: 'failed', compressions: s.recorded.compressions, spend } };
  }
  titleInBackground(deps, open, s);
  // Only behind a reply the user has: the review never delays it, and a reply that did not go out is not reviewed.
  if (delivered.kind === 'delivered') reviewInBackground(deps, open, { session: s.recorded.session, history: s.prepared.history });
  return { ...s.delivered, outcome: { ...delivered, spend } };
}

/**
 * The first exchange of a new chat conversation names it, behind the reply (features/llm/auto-title.ts). Not scheduled runs,
 * not API requests (a client may send thousands, each a session of its own).
 */
function titleInBackground(deps: TurnDeps, open: OpenTurn, s: SettleInput): void {
  const services = deps.conversation;
  const session = s.recorded.session;
  const { first, ctx } = open;
  if (s.prepared.history.length > 0 || first.scheduled || first.platform === 'api' || session.title || !autoTitleEnabled(services.config)) return;
  const provider = services.sideTasks.forSession(session.model, 'title');
  if (!provider) return;
  // Priced like the turn's own calls, recorded the way calls outside a turn's messages are (features/budgets/meter.ts TurnSpend):
  // the session's tokens and cost and the budgets, once the title is written; not one of its API calls.
  const titleSpend = new TurnSpend({ store: deps.store, budgets: deps.controls.budgets });
  const titleMeter = titleSpend.track(s.prepared.newMeter(), open.spender, () => session.id);
  const title = async (): Promise<void> => {
    await titleNewSession({
      store: deps.store,
      provider: titleMeter.provider(provider),
      sessionId: session.id,
      userText: s.plan.userMessage,
      reply: s.finished.reply,
      log: ctx.log,
    });
    await titleSpend.settle(0);
  };
  services.background.track(title().catch((err: unknown) => ctx.log.warn({ err }, 'pricing the title call failed')));
}

/**
 * The loop ended on an abort. Shutdown or a lost lock: another worker runs this turn again, so nothing is written
 * here but what it cost. Interrupted or stopped by the user: what it did is recorded, nothing is sent.
 */
export async function settleAborted(deps: TurnDeps, open: OpenTurn, prepared: PreparedTurn, result: ConversationResult, spend: TurnSpend): Promise<TurnResult> {
  const abort: unknown = open.ctx.signal.reason;
  const apiCalls = result.apiCalls + prepared.media.calls.length;
  const cost = (): TurnOutcome['spend'] => ({ costUsd: prepared.meter.costUsd, apiCalls });
  if (abort instanceof TurnAbort && (abort.kind === 'shutdown' || abort.kind === 'lock_lost')) {
    await spend.settle(apiCalls);
    return { outcome: { kind: 'abandoned', compressions: prepared.compressions, spend: cost() } };
  }
  const { compressions } = await recordInterrupted(deps, open, prepared, result, spend);
  await open.live.close();
  return { afterAck: () => open.progress.clear(), outcome: { kind: 'interrupted', compressions, spend: cost() } };
}
