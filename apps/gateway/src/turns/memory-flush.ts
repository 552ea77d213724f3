/**
 * Before a conversation loses its details (/new ends it, /compress summarises its middle) the agent gets one
 * memory-only model call to save what should outlive it (tools.ts `flushSessionMemory`). Commands run on
 * the ingress, which has no agent runtime, so the call goes to the side-task chain (llm/side-tasks.ts: the
 * auxiliary model, then the session's own model and the fallbacks). Best effort: a missing model, a provider
 * error or the time limit only skip the flush, never the reset or the compression.
 */
import { FallbackState, type FlushReason, type Session, type SessionStore } from '@herald/agent-core';
import type { Logger } from '../logger.js';
import type { ConversationServices } from '../sessions/services.js';
import { flushSessionMemory } from './tools.js';

/** The flush is one short call; past this it is abandoned. */
export const MEMORY_FLUSH_TIMEOUT_MS = 30_000;

export async function flushBeforeLosingDetails(
  store: SessionStore,
  services: ConversationServices,
  session: Session,
  reason: FlushReason,
  log?: Logger,
): Promise<void> {
  const { config } = services;
  try {
    const primary = services.sideTasks.forSession(session.model);
    if (!primary) return;
    const agent = {
      primary,
      fallbacks: [],
      fallbackState: new FallbackState(),
      systemPrompt: config.systemPrompt,
      maxIterations: config.maxIterations,
    };
    const result = await flushSessionMemory({ store, agent, toolsets: config.toolsets }, session, reason, AbortSignal.timeout(MEMORY_FLUSH_TIMEOUT_MS));
    if (result?.error) log?.warn({ err: result.error, sessionId: session.id }, 'memory flush failed');
    else if (result && result.saved > 0) log?.info({ saved: result.saved, sessionId: session.id, reason }, 'memory flushed');
  } catch (err) {
    log?.warn({ err, sessionId: session.id }, 'memory flush skipped');
  }
}
