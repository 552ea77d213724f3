/**
 * One turn's stages, in order: the messages a worker took from a session's mailbox → the agent loop → the store →
 * the platform. Each stage is a named function in turn/stages/ with a typed input and output; the policies around
 * a turn (watchdog, metrics, store outage, user-facing errors, admission, spend) are declared in turn/pipeline.ts.
 *
 *   prepare (open → early answers → prepare → files-only answer) → run the loop (plan → run) → finish → record
 *   → deliver → settle (→ review: every N turns, behind the delivered reply, never awaited)
 *
 * The outbox (`turns` table) makes a re-run after a crash safe: a turn already delivered is skipped, a turn whose
 * reply was recorded but not delivered is delivered without asking the LLM again, and messages are persisted
 * under the turn id so persisting the same turn twice writes each message once.
 */
import type { TurnContext, TurnResult } from '../queue/turn-context.js';
import type { TurnSpend } from '../features/budgets/turn-spend.js';
import type { TurnDeps } from './stages/deps.js';
import { openTurn } from './stages/open.js';
import { answerWithoutModel } from './stages/early-answer.js';
import { answerFromFiles, prepareTurn } from './stages/prepare.js';
import { planLoop, runLoop } from './stages/plan.js';
import { finishTurn } from './stages/finish.js';
import { recordTurn } from './stages/record.js';
import { deliverReply } from './stages/deliver.js';
import { settleAborted, settleTurn } from './stages/settle.js';

export async function runTurnStages(deps: TurnDeps, ctx: TurnContext, spend: TurnSpend): Promise<TurnResult> {
  // Prepare: the session and the outbox row, then what can be answered without the model, then what the model needs.
  const open = await openTurn(deps, ctx);
  if (!open) return { outcome: { kind: 'finished-before', compressions: 0 } };
  const early = await answerWithoutModel(deps, open);
  if ('answer' in early) return deliverReply(open, { text: early.answer, compressions: 0 });
  const prepared = await prepareTurn(deps, open, early.agent, spend);
  const filesOnly = await answerFromFiles(deps, open, prepared, spend);
  if (filesOnly !== null) return deliverReply(open, { text: filesOnly, compressions: prepared.compressions });
  // Run the loop on one explicit plan.
  const plan = await planLoop(deps, open, prepared);
  const result = await runLoop(open, plan);
  if (ctx.signal.aborted) return settleAborted(deps, open, prepared, result, spend);
  // Finish, record, deliver, settle.
  const finished = await finishTurn(deps, open, prepared, plan, result);
  const recorded = await recordTurn(deps, open, prepared, result, finished, spend);
  const delivered = await deliverReply(open, {
    text: recorded.text,
    failed: Boolean(result.error),
    checked: { check: finished.check, recorded: recorded.turn },
    compressions: recorded.compressions,
  });
  return settleTurn(deps, open, { prepared, plan, result, finished, recorded, delivered });
}
