/**
 * Stage 1a — open the turn: the session its transcript goes to, its outbox row under this worker's fence, and what
 * the user sees while it runs (reactions, typing, progress, streaming). Null when the outbox says the turn finished
 * before (a recovered job): nothing is run again.
 */
import {
  providerLabel,
  type AgentEvent,
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
  const { session, row, history, notes } = await beginInSession(deps, ctx, sessionKey, agent, tools);
  if (row.status === 'delivered' || row.status === 'interrupted' || row.status === 'failed') {
    ctx.log.info({ status: row.status }, 'turn already finished; not running it again');
    return null;
  }
  const egress = deps.egress(first.platform, first.account);
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

/**
 * The turn's outbox row under this worker's fence, in the session its transcript goes to, and that transcript when
 * it is known already. Most turns find the key's session open: it (and its transcript) is read with the turn's begin,
 * one round trip on PostgreSQL. Otherwise the turn begins in a new session, created with it (one round trip on
 * PostgreSQL too), or in the one another turn opened meanwhile. A session created just now has no transcript yet:
 * nothing to read. On PostgreSQL either begin reads the saved notes the turn shows too (the plan stage's notes block).
 * When the router found no session open (the payload's `newSession`), creating comes first — unless this process
 * has since seen one begun for the key (the turn of an earlier message of the same burst created it).
 */
async function beginInSession(
  deps: TurnDeps,
  ctx: TurnContext,
  sessionKey: string,
  agent: AgentRuntime | null,
  tools: TurnToolsFactory,
): Promise<{ session: Session; row: Turn; history: TurnHistory | null; notes: NotesRead | null }> {
  const first = ctx.entries[0].payload;
  const notesOf = tools.notesKey(first.platform, first.userId) ?? undefined;
  const { resetPolicy, activitySeen } = deps.conversation;
  const createFirst = first.newSession === true && !activitySeen.current(resetPolicy, sessionKey, Date.now());
  const opened = createFirst ? null : await deps.store.beginTurnInOpenSession(ctx.turnId, sessionKey, ctx.fence, notesOf);
  if (opened) return { session: opened.session, row: opened.turn, history: opened.history ?? null, notes: opened.notes ?? null };
  const last = ctx.entries[ctx.entries.length - 1].payload;
  const init = await newSessionInit(deps, first, last, agent, tools);
  const begun = await deps.store.beginTurnInNewSession(ctx.turnId, sessionKey, init, ctx.fence, notesOf, { lookedForOpen: !createFirst });
  // A session started now was active now: this process's reset check needs no read for it (ActivitySeen).
  if (begun.created) activitySeen.note(sessionKey, begun.session.startedAt);
  return { session: begun.session, row: begun.turn, history: begun.created ? { history: [], saved: [] } : (begun.history ?? null), notes: begun.notes ?? null };
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
    ...(built && { prompt: { personality: built.personality, layers: built.layers } }),
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
