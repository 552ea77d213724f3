/**
 * Stage 3 — finish: what the loop produced becomes the reply to record — the answer (or a short error text), the
 * pictures in it, send_file's files, a voice reply (turn/finish-reply.ts) — and the delivery check is made before
 * the record, so that a reply that may go out is claimed for sending by the same write (out/send-reply.ts).
 */
import type { ConversationResult, NewTurnFile, Session } from '@herald/agent-core';
import type { DeliveryCheck } from '../../queue/mailbox.js';
import { finishReply } from '../finish-reply.js';
import { hasReasoning } from '../../out/reasoning-view.js';
import { checkBeforeRecord } from '../../out/send-reply.js';
import { cacheCollapse } from '../../features/llm/cache-health.js';
import type { ModelCall } from '../../features/budgets/meter.js';
import type { Logger } from '../../support/logger.js';
import type { TurnDeps } from './deps.js';
import type { OpenTurn } from './open.js';
import type { LoopPlan } from './plan.js';
import type { PreparedTurn } from './prepare.js';

export interface FinishedTurn {
  reply: string;
  files: NewTurnFile[];
  /** The call that made the voice reply, priced with the turn's (already on its meter). */
  speech: ModelCall | null;
  /** Null: Redis could not answer the check just now (the reply is recorded unclaimed, the send checks again). */
  check: DeliveryCheck | null;
  /** API calls of the turn: the loop's (answered or not), reading the files, the voice reply. */
  apiCalls: number;
}

export async function finishTurn(deps: TurnDeps, open: OpenTurn, prepared: PreparedTurn, plan: LoopPlan, result: ConversationResult): Promise<FinishedTurn> {
  const { ctx } = open;
  // The /reasoning switch is read only when there is reasoning to show (one read less per message otherwise).
  const showReasoning = hasReasoning(result.newMessages) && (await deps.conversation.reasoning.isOn(ctx.sessionKey));
  const { reply, files, speech } = await finishReply(deps.outbound, { result, files: plan.replyFiles, sessionKey: ctx.sessionKey, egress: open.egress, signal: ctx.signal, log: ctx.log, showReasoning });
  if (speech) prepared.meter.add(speech);
  // A compression (before or inside the turn) starts a new prefix: a cold cache there is expected.
  if (prepared.compressions === 0 && !result.compactedHistory) warnOnCacheCollapse(prepared.before, result, ctx.log);
  const check = await checkBeforeRecord(ctx);
  const apiCalls = result.apiCalls + prepared.media.calls.length + (speech ? 1 : 0);
  return { reply, files, speech, check, apiCalls };
}

/** A session whose prompt cache stopped hitting costs several times more per turn: the operator should know. */
function warnOnCacheCollapse(before: Session, result: ConversationResult, log: Logger): void {
  const collapse = cacheCollapse(before, result.usage);
  if (!collapse) return;
  log.warn(
    { sessionId: before.id, model: result.model, hitRateBefore: Number(collapse.before.toFixed(2)), hitRateNow: Number(collapse.now.toFixed(2)) },
    'prompt cache hit rate collapsed for this session (model switched, or the prompt prefix changed)',
  );
}
