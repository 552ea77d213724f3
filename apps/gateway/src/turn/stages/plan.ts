/**
 * Stage 2 — run the loop on one explicit plan. `planLoop` assembles the plan (the agent loop's options) from its
 * parts — the prepared history and providers, the tools stage's part (tools, budget, notes block, clarify;
 * turn/tools.ts), the compression settings and the event wiring; each field is chosen once, nothing rewrites the
 * plan afterwards. `runLoop` runs it, with typing shown until it ends however it ends.
 */
import { createHash } from 'node:crypto';
import { runConversation, withoutStoredMemoryBlocks, type ConversationOptions, type ConversationResult, type FileSink } from '@herald/agent-core';
import { ReplyFiles } from '../../out/reply-files.js';
import { flushBeforeLoopCompression } from '../memory-flush.js';
import type { ToolPlan } from '../tools.js';
import type { TurnDeps } from './deps.js';
import type { OpenTurn } from './open.js';
import { composeUserMessage, type PreparedTurn } from './prepare.js';

export interface LoopPlan {
  options: ConversationOptions;
  /**
   * What send_file (or execute_code) queued during the turn, recorded with the reply and sent after its text; null
   * when nothing was: the reply's files are only made when the first one comes.
   */
  replyFiles: () => ReplyFiles | null;
  /** The user's message as composed from the entries (before any notes block): what the auto-title reads. */
  userMessage: string;
}

/**
 * The prompt-cache key OpenAI routes requests by (with the prompt's first tokens): one per chat, the same for all
 * its sessions, since a compression starts a new session whose first call must reach the cache the old session's
 * last call wrote (the compressed prefix). Hashed: the chat's platform ids do not leave.
 */
function promptCacheKey(sessionKey: string): string {
  return `herald-${createHash('sha256').update(sessionKey).digest('hex').slice(0, 32)}`;
}

export async function planLoop(deps: TurnDeps, open: OpenTurn, prepared: PreparedTurn): Promise<LoopPlan> {
  const { ctx, first, last } = open;
  const { agent, session, providers, summarizer, searchSummarizer, meter, history, media } = prepared;
  const services = deps.conversation;
  let replyFiles: ReplyFiles | null = null;
  const files: FileSink = { add: (file) => (replyFiles ??= new ReplyFiles(deps.outbound.limits)).add(file) };
  const userMessage = composeUserMessage(ctx.entries, history, media.blocks);
  // session_search summarises with the turn's metered side-task chain (its cost is the turn's).
  const toolContext = {
    sessionId: session.id,
    sessionKey: open.sessionKey,
    userId: first.userId,
    platform: first.platform,
    ...(searchSummarizer && { sideProvider: searchSummarizer }),
  };
  // Tools, a budget shared with subagents, saved notes in front of a session's first message, clarify questions.
  const turnTools = open.tools.forTurn({ ctx, egress: open.egress, payload: last, files, notes: open.notes });
  const toolPlan: ToolPlan | null = turnTools
    ? await turnTools.plan({
        userMessage,
        history,
        provider: providers.primary,
        fallbacks: providers.fallbacks,
        maxIterations: agent.maxIterations,
        toolContext,
      })
    : null;
  const options: ConversationOptions = {
    userMessage: toolPlan?.userMessage ?? userMessage,
    userAttachments: media.attachments,
    userImages: media.images,
    // Notes blocks stored by sessions from before B7 go: the current notes come with each request instead.
    history: withoutStoredMemoryBlocks(history),
    ...(toolPlan?.requestContext ? { requestContext: toolPlan.requestContext } : {}),
    ...(services.config.ephemeralSystemPrompt ? { ephemeralSystemPrompt: services.config.ephemeralSystemPrompt } : {}),
    systemPrompt: session.systemPrompt ?? agent.systemPrompt,
    // B1/E9: the turn's id is the task id tools keep per-task state under (a re-run of the turn keeps it).
    taskId: ctx.turnId,
    signal: ctx.signal,
    provider: providers.primary,
    fallbacks: providers.fallbacks,
    fallbackState: agent.fallbackState,
    maxIterations: agent.maxIterations,
    cacheKey: promptCacheKey(open.sessionKey),
    compression: {
      contextWindow: agent.contextWindow,
      thresholdRatio: services.config.compressionThreshold,
      windows: services.windows,
      // Without an auxiliary model the loop summarises with the model it is using at the time (it may have
      // fallen back from one that is down), not with the chain that starts at the primary again.
      ...(summarizer && (services.config.compressionModel || services.config.auxiliaryModel) ? { summaryProvider: summarizer } : {}),
      // The memory-only flush runs before each compression inside the turn too (memory-flush.ts): worked out when a
      // compression comes, not for every turn (most never compress; without memory or a user it does nothing).
      beforeCompress: async (messages) => {
        const flush = flushBeforeLoopCompression(deps.store, services, session, providers.primary, ctx.signal, ctx.log, (p) => meter.provider(p));
        await flush?.(messages);
      },
    },
    ...(toolPlan ? { tools: toolPlan.tools, budget: toolPlan.budget, toolHooks: toolPlan.toolHooks } : {}),
    getSteerMessages: toolPlan?.getSteerMessages ?? ctx.takeSteerMessages,
    onEvent: (event) => {
      ctx.touch(); // the worker's inactivity watchdog counts every agent event as activity
      if (event.type === 'step') ctx.prepared?.(); // the model request is going out: the next turn may prepare
      open.live.onEvent(event);
      if (event.type === 'tool_start') open.progress.tools();
      open.relay?.(event);
    },
    toolContext: toolPlan?.toolContext ?? toolContext,
    ...(prepared.saved.length > 0 ? { resume: prepared.saved } : {}),
    onCheckpoint: (messages) => deps.store.checkpointTurn(ctx.turnId, ctx.fence, session.id, messages, { platformMessageId: last.platformMessageId }),
  };
  return { options, replyFiles: () => replyFiles, userMessage };
}

export async function runLoop(open: OpenTurn, plan: LoopPlan): Promise<ConversationResult> {
  try {
    return await runConversation(plan.options);
  } finally {
    open.live.stopTyping();
  }
}
