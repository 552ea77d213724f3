/**
 * Stage 2b — run the loop: the agent loop runs the plan, with typing shown until it ends however it ends.
 */
import { runConversation, type ConversationResult } from '@herald/agent-core';
import type { OpenTurn } from './open.js';
import type { LoopPlan } from './plan.js';

export async function runLoop(open: OpenTurn, plan: LoopPlan): Promise<ConversationResult> {
  try {
    return await runConversation(plan.options);
  } finally {
    open.live.stopTyping();
  }
}
