/**
 * Stage 1a — open the turn: the session its transcript goes to, its outbox row under this worker's fence, and what
 * the user sees while it runs (reactions, typing, progress, streaming). Null when the outbox says the turn finished
 * before (a recovered job): nothing is run again.
 */
import {
  providerLabel,
  type AgentEvent,
  type ExpiredSession,
  type NotesRead,
  type Session,
  type SessionInit,
  type SessionSource,
  type Turn,
  type TurnHistory,
} from '@herald/agent-core';
import type { PlatformEgress } from '@herald/adapters';
import type { MailboxEntry, TurnPayload } from '../../queue/mailbox.js';
import type { TurnContext } from '../../queue/turn-context.js';
import type { AgentRuntime } from '../agent-runtime.js';
import type { TurnToolsFactory } from '../tools.js';
import { LiveTurn, showTurnProgress, type ReactionTarget, type TurnProgress } from '../../out/progress.js';
import { statusReactionsFor } from '../../support/config/progress.js';
import { untilStored } from '../../out/until-stored.js';
import type { ReplyTarget } from '../../out/send-reply.js';
import { scheduleSessionKey } from '../../features/schedules/store.js';
import { DEFAULT_PROFILE, profileColumn } from '../../support/config/profile-names.js';
import type { SpendSubject } from '../../features/budgets/guard.js';
import type { TurnDeps } from './deps.js';
import { currentSince, expiryReason, RESET_NOTICES } from '../../features/sessions/reset-policy.js';
import { flushOutsideTurn } from '../memory-flush.js';

/** A turn whose outbox row is this worker's: everything the later stages address it by. */
export interface OpenTurn {
  ctx: TurnContext;
  /** The first and the last message the turn answers (the last one is replied to). */
  first: TurnPayload;
  last: TurnPayload;
  /** The key the transcript lives under (a scheduled task with a session of its own has its own; the lock is the chat's). */
  sessionKey: string;
  /** The profile's agent (null: no model configured) and tools. */
  agent: AgentRuntime | null;
  tools: TurnToolsFactory;
  /** The session as the turn found it. */
  session: Session;
  /** The outbox row as beginTurn left it (a re-run finds the reply or the streamed message of an earlier run). */
  row: Turn;
  /** The session's transcript for this turn when the store read it with the begin (PostgreSQL), else null. */
  history: TurnHistory | null;
  /** The saved notes of the person the turn answers when the store read them with the begin (PostgreSQL), else null. */
  notes: NotesRead | null;
  egress: PlatformEgress;
  progress: TurnProgress;
  /** The HTTP API's live relay of agent events, or null. */
  relay: ((event: AgentEvent) => void) | null;
  live: LiveTurn;
  /** Where and how the reply is sent (out/send-reply.ts). */
  target: ReplyTarget;
  /** Whose spend the turn is (budgets). */
  spender: SpendSubject;
}

export async function openTurn(deps: TurnDeps, ctx: TurnContext): Promise<OpenTurn | null> {
  const first = ctx.entries[0].payload;
  const last = ctx.entries[ctx.entries.length - 1].payload;
  const { store } = deps;
  // The profile the message was routed to: its model, prompt, tools and notes.
  const { agent, tools } = deps.profiles.of(first.profile);
  // A scheduled task with a session of its own keeps its transcript there; the lock is still the chat's.
  const sessionKey = first.scheduled?.session === 'own' ? scheduleSessionKey(ctx.sessionKey, first.scheduled.id) : ctx.sessionKey;
  const { session, row, history, notes, resetNotice } = await beginInSession(deps, ctx, sessionKey, agent, tools);
  if (row.status === 'delivered' || row.status === 'interrupted' || row.status === 'failed') {
    ctx.log.info({ status: row.status }, 'turn already finished; not running it again');
    return null;
  }
  const egress = deps.egress(first.platform, first.account);
  // Best effort, as the status reactions: the reply matters more than the note before it.
  if (resetNotice) await egress.send(last.conversationId, resetNotice).catch((err: unknown) => ctx.log.warn({ err }, 'the reset notice could not be sent'));
  // 👀 on the user's messages while this turn runs, ⚙️ with tools, ✅/⚠️ once answered (out/progress.ts showTurnProgress).
  const emoji = statusReactionsFor(deps.conversation.progress, first.platform, egress);
  const progress = showTurnProgress(egress, emoji, reactionTargets(ctx.entries), ctx.log);
  // Only a platform with a relay (the HTTP API) is asked for one: a chat platform's turn has nothing to look up.
  const relay = deps.relays.get(last.platform)?.(last) ?? null;
  const live = liveDisplay(deps, ctx, egress, row, relay !== null);
  const target: ReplyTarget = {
    store,
    egress,
    ctx,
    live,
    conversationId: last.conversationId,
    replyTo: last.platformMessageId,
    deliveryBaseDelayMs: deps.deliveryBaseDelayMs,
    onPossibleDuplicate: deps.onPossibleDuplicate,
    sendAttemptsAtBegin: row.sendAttempts,
  };
  const spender = { profile: first.profile ?? DEFAULT_PROFILE, platform: first.platform, userId: first.userId };
  return { ctx, first, last, sessionKey, agent, tools, session, row, history, notes, egress, progress, relay, live, target, spender };
}

/** beginInSession's result: the session, the outbox row, what the begin read with it, and the reset's notice. */
interface Begun {
  session: Session;
  row: Turn;
  history: TurnHistory | null;
  notes: NotesRead | null;
  /** The idle / daily reset ended the key's session first and the user is told so (before the reply). */
  resetNotice: string | null;
}

/**
 * The turn's outbox row under this worker's fence, in the session its transcript goes to, and that transcript when
 * it is known already. Most turns find the key's session open: it (and its transcript) is read with the turn's begin,
 * one round trip on PostgreSQL, and so is its last activity, for the idle / daily reset (features/sessions/
 * reset-policy.ts). An expired session is ended first (its notes saved, as /new does). Otherwise the turn begins in a
 * new session, created with it (one round trip on PostgreSQL too), or in the one another turn opened meanwhile. A
 * session created just now has no transcript yet: nothing to read. On PostgreSQL either begin reads the saved notes
 * the turn shows too (the plan stage's notes block).
 */
async function beginInSession(deps: TurnDeps, ctx: TurnContext, sessionKey: string, agent: AgentRuntime | null, tools: TurnToolsFactory): Promise<Begun> {
  const first = ctx.entries[0].payload;
  const notesOf = tools.notesKey(first.platform, first.userId) ?? undefined;
  const opened = await deps.store.beginTurnInOpenSession(ctx.turnId, sessionKey, ctx.fence, notesOf, resetsFor(deps, first));
  if (opened && 'session' in opened)
    return { session: opened.session, row: opened.turn, history: opened.history ?? null, notes: opened.notes ?? null, resetNotice: null };
  const resetNotice = opened ? await endExpired(deps, ctx, opened) : null;
  const last = ctx.entries[ctx.entries.length - 1].payload;
  const init = await newSessionInit(deps, first, last, agent, tools);
  const begun = await deps.store.beginTurnInNewSession(ctx.turnId, sessionKey, init, ctx.fence, notesOf);
  const history = begun.created ? { history: [], saved: [] } : null;
  return { session: begun.session, row: begun.turn, history, notes: begun.notes ?? null, resetNotice };
}

/**
 * The reset policy's bound for this turn's begin (currentSince), or null: a user's message is checked; a scheduled
 * run is not (it was never a reason to start afresh), nor the HTTP API's turn (its request checked before it queued).
 */
function resetsFor(deps: TurnDeps, first: TurnPayload): number | null {
  if (first.scheduled || deps.relays.has(first.platform)) return null;
  return currentSince(deps.conversation.resetPolicy, Date.now());
}

/**
 * Ends the key's expired session (its notes saved first, as /new does, so the new session starts with them); the
 * notice for the user, when the old session had something in it. The turn holds the session: nothing else runs on it.
 */
async function endExpired(deps: TurnDeps, ctx: TurnContext, { expired, lastActivity }: ExpiredSession): Promise<string | null> {
  const { store, conversation } = deps;
  const reason = expiryReason(conversation.resetPolicy, lastActivity, Date.now()) ?? 'idle';
  if (expired.messageCount > 0) await flushOutsideTurn(store, conversation, expired, 'reset', ctx.log);
  await store.endSession(expired.id, reason);
  ctx.log.info({ sessionId: expired.id, reason }, 'session reset');
  return expired.messageCount > 0 ? RESET_NOTICES[reason] : null;
}

/**
 * A new session of the key, as the turn would start it: its system prompt made now by the prompt builder from the
 * profile's layers (features/prompt), with the record of those layers. Stored with the session and replayed
 * byte-identical on every call: the prompt cache depends on it, and a context file or skill changed later reaches only
 * the sessions that start after the change.
 */
async function newSessionInit(
  deps: TurnDeps,
  first: TurnPayload,
  last: TurnPayload,
  agent: AgentRuntime | null,
  tools: TurnToolsFactory,
): Promise<SessionInit> {
  const profile = deps.conversation.profiles.get(first.profile);
  const built = agent
    ? await deps.conversation.prompts.build({
        profile: { ...profile, systemPrompt: agent.systemPrompt },
        platform: first.platform,
        chatType: last.chatType,
        startedAt: new Date(),
        timeZone: deps.conversation.config.timezone,
        toolNames: tools.toolNames,
      })
    : null;
  return {
    source: first.platform as SessionSource,
    userId: first.userId,
    userName: first.userName,
    chatId: first.chatId,
    profile: profileColumn(first.profile ?? DEFAULT_PROFILE),
    model: agent ? providerLabel(agent.primary) : undefined,
    systemPrompt: built?.text,
    // Its record (personality, layers) is kept with the new session.
    ...(built && { prompt: built }),
  };
}

/** Typing, tool progress, status lines and streaming (out/progress.ts); none of its own for a relayed platform. */
function liveDisplay(deps: TurnDeps, ctx: TurnContext, egress: PlatformEgress, row: Turn, relayed: boolean): LiveTurn {
  const first = ctx.entries[0].payload;
  const last = ctx.entries[ctx.entries.length - 1].payload;
  return new LiveTurn({
    egress,
    conversationId: last.conversationId,
    platform: first.platform,
    chatType: last.chatType,
    replyTo: last.platformMessageId,
    settings: relayed ? undefined : deps.conversation.progress,
    signal: ctx.signal,
    canDeliver: ctx.canDeliver,
    log: ctx.log,
    deliveryBaseDelayMs: deps.deliveryBaseDelayMs,
    // A re-run writes into the message an earlier run streamed into, rather than posting a second one.
    streamMessageId: row.streamMessageId,
    // The message exists on the platform now: its id must land (one per-write retry owner, out/until-stored.ts).
    onStreamCreated: (id) =>
      untilStored(() => deps.store.recordStreamMessage(ctx.turnId, ctx.fence, id), ctx.log, 'record the streamed message').then(() => undefined),
  });
}

/** The user's messages a turn answers (a scheduled run has none to react to). */
function reactionTargets(entries: MailboxEntry[]): ReactionTarget[] {
  return entries.flatMap(({ payload: p }) => (p.platformMessageId ? [{ conversationId: p.conversationId, platformMessageId: p.platformMessageId }] : []));
}
