/**
 * Stage 1b — answers that need no model call: a reply recorded before a restart (delivered without asking the LLM
 * again), the setup hint when no model is configured, and the refusal of a used-up budget. Each is recorded (the
 * first one already was) and returned as the text to deliver; otherwise the turn asks the model.
 */
import type { AgentRuntime } from '../agent-runtime.js';
import { composeUserMessage } from '../compose.js';
import type { TurnDeps } from './deps.js';
import type { OpenTurn } from './open.js';

const NO_MODEL_REPLY = 'No model is configured yet: set HERALD_MODEL (for example openai:gpt-4.1-mini) and restart Herald.';

/** The text to deliver without asking the model, or the agent that is to be asked. */
export type EarlyAnswer = { answer: string } | { agent: AgentRuntime };

export async function answerWithoutModel(deps: TurnDeps, open: OpenTurn): Promise<EarlyAnswer> {
  const { store } = deps;
  const { ctx, row, session, last } = open;
  if (row.status === 'replied' && row.reply !== null) {
    ctx.log.info('reply was recorded before a restart; delivering it without a new LLM call');
    return { answer: row.reply };
  }
  const { agent } = open;
  if (!agent) {
    await store.recordReply(ctx.turnId, NO_MODEL_REPLY, ctx.fence);
    return { answer: NO_MODEL_REPLY };
  }
  // A used-up budget answers instead of the model (admins are exempt). The message is kept in the conversation
  // with the refusal as its answer, so /retry runs it once the budget is reset.
  const refusal = await deps.controls.budgets.refusal(open.spender);
  if (refusal === null) return { agent };
  ctx.log.info({ profile: open.spender.profile }, 'budget used up; turn refused');
  const ofTurn = { turnId: ctx.turnId };
  await store.transaction(async () => {
    await store.appendMessages(session.id, [{ role: 'user', content: composeUserMessage(ctx.entries, []) }], {
      ...ofTurn,
      platformMessageId: last.platformMessageId,
    });
    await store.appendMessages(session.id, [{ role: 'assistant', content: refusal }], { ...ofTurn, firstSeq: 1 });
    await store.recordReply(ctx.turnId, refusal, ctx.fence);
  });
  return { answer: refusal };
}
