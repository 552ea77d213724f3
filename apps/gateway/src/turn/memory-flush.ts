/**
 * Before a conversation loses its details (/new ends it, /compress summarises its middle) the agent gets one
 * memory-only model call to save what should outlive it (tools.ts `flushSessionMemory`), before it ends: the
 * next session then starts with the notes saved. Commands run on
 * the ingress, which has no agent runtime, so the call goes to the side-task chain (features/sessions/models.ts SideTaskModels: the
 * auxiliary model, then the session's own model and the fallbacks). The same flush runs before the compressions
 * inside a turn (on the turn's own messages, unsaved ones included) and before the idle and daily resets; a
 * compression that finds nothing to summarise makes no flush (compression/compressor.ts `beforeSummary`). Best
 * effort: a missing model, a provider
 * error or the time limit only skip the flush, never the reset or the compression.
 */
import { FallbackState, flushMemory, type ChatMessage, type FlushReason, type Provider, type Session, type SessionStore } from '@herald/agent-core';
import type { Logger } from '../support/logger.js';
import type { ConversationServices } from '../features/sessions/services.js';
import { flushSessionMemory, offersMemory } from './tools.js';
import { memoryKeyOf } from '../features/profiles/table.js';
import { spendOutsideTurn } from './outside-spend.js';

/** The flush is one short call; past this it is abandoned. */
const MEMORY_FLUSH_TIMEOUT_MS = 30_000;

export async function flushBeforeLosingDetails(
  store: SessionStore,
  services: ConversationServices,
  session: Session,
  reason: FlushReason,
  log?: Logger,
  /** Inside a turn: the turn's spend meter, so the call is priced with the turn's own (features/budgets/meter.ts). */
  metered: (p: Provider) => Provider = (p) => p,
): Promise<void> {
  const profile = services.profiles.get(session.profile);
  try {
    // The session's model (a profile's session records its profile's model when it starts).
    const side = services.sideTasks.forSession(session.model ?? profile.model ?? null, 'compression');
    if (!side) return;
    const primary = metered(side);
    const agent = {
      primary,
      fallbacks: [],
      fallbackState: new FallbackState(),
      systemPrompt: profile.systemPrompt,
      maxIterations: profile.maxIterations,
    };
    const userKey = session.userId ? memoryKeyOf(profile, session.source, session.userId) : undefined;
    const result = await flushSessionMemory(
      { store, agent, toolsets: profile.toolsets, userKey },
      session,
      reason,
      AbortSignal.timeout(MEMORY_FLUSH_TIMEOUT_MS),
    );
    if (result?.error) log?.warn({ err: result.error, sessionId: session.id }, 'memory flush failed');
    else if (result && result.saved > 0) log?.info({ saved: result.saved, sessionId: session.id, reason }, 'memory flushed');
  } catch (err) {
    log?.warn({ err, sessionId: session.id }, 'memory flush skipped');
  }
}

/**
 * The flush outside any turn (/new, /compress, the idle and daily resets), priced as a turn's calls are
 * (turn/outside-spend.ts). Best effort like the flush: a store error is logged.
 */
export async function flushOutsideTurn(
  store: SessionStore,
  services: ConversationServices,
  session: Session,
  reason: FlushReason,
  log?: Logger,
): Promise<void> {
  const { spend, meter } = spendOutsideTurn(store, services, session);
  await flushBeforeLosingDetails(store, services, session, reason, log, (p) => meter.provider(p));
  await spend.settle().catch((err: unknown) => log?.warn({ err, sessionId: session.id }, 'the memory flush ran but its spend could not be recorded'));
}

/**
 * For the idle and daily resets: the expiring session's notes are saved before it ends, as /new does, so the
 * session the message starts is shown them (the reset waits for the flush, at most MEMORY_FLUSH_TIMEOUT_MS).
 */
export function flushBeforeReset(store: SessionStore, services: ConversationServices, log?: Logger): (expiring: Session) => Promise<void> {
  return (expiring) => flushOutsideTurn(store, services, expiring, 'reset', log);
}

/**
 * The loop compressor's `beforeCompress` hook for a turn (50 % preflight, after tool batches, context overflow):
 * a memory-only call on the messages about to be summarised; undefined when there is no memory tool or no user.
 */
export function flushBeforeLoopCompression(
  store: SessionStore,
  services: ConversationServices,
  session: Session,
  provider: Provider,
  signal: AbortSignal,
  log?: Logger,
  /** The turn's spend meter (see flushBeforeLosingDetails); `provider` is metered already. */
  metered: (p: Provider) => Provider = (p) => p,
): ((messages: readonly ChatMessage[]) => Promise<void>) | undefined {
  if (!session.userId) return undefined;
  // The notes of this person in this profile (features/profiles/table.ts), with the profile's own toolsets.
  const profile = services.profiles.get(session.profile);
  if (!offersMemory(profile.toolsets)) return undefined;
  const userKey = memoryKeyOf(profile, session.source, session.userId);
  const side = services.sideTasks.forSession(session.model, 'compression');
  return async (messages) => {
    const result = await flushMemory({
      // The side-task chain when there is one (the auxiliary model first), else the turn's own provider.
      provider: side ? metered(side) : provider,
      history: messages,
      userKey,
      store,
      systemPrompt: session.systemPrompt ?? profile.systemPrompt,
      reason: 'compression',
      signal: AbortSignal.any([signal, AbortSignal.timeout(MEMORY_FLUSH_TIMEOUT_MS)]),
    });
    if (result.error) log?.warn({ err: result.error, sessionId: session.id }, 'memory flush before compression failed');
    else if (result.saved > 0) log?.info({ saved: result.saved, sessionId: session.id, reason: 'compression' }, 'memory flushed');
  };
}
