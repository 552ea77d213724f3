/**
 * The gateway's safety net (Hermes' 85 % rule): before a turn, a session whose last prompt — or, unknown, its
 * history at characters / 4 — reaches 85 % of the model's context window is compressed into a child session.
 * The old session ends with `end_reason = compression` and keeps its transcript; the child (same key, same
 * source, `parent_session_id` set, title `name #2`) holds the compressed history and the key moves to it.
 * The loop compresses earlier (50 %, inside a turn); this catches sessions that grew between turns.
 * `/compress` calls the same function with `force`.
 */
import {
  compressHistory,
  processContextWindows,
  type ContextWindows,
  estimateMessagesTokens,
  gatewayThreshold,
  gatewayWarningThreshold,
  type ChatMessage,
  type NewSessionInit,
  type Provider,
  type Session,
  type SessionStore,
} from '@herald/agent-core';
import type { Logger } from '../support/logger.js';

/** Fewer messages than this are never compressed: there is no middle to summarise. */
export const MIN_MESSAGES_TO_COMPRESS = 4;
/** This many messages trigger compression whatever their size (tiny messages still cost time and tokens). */
const MAX_MESSAGES_BEFORE_COMPRESS = 400;
/** On /compress: keep the last two exchanges verbatim and summarise everything between them and the head. */
const FORCED_TAIL_MESSAGES = 4;
const COMPRESSION_END_REASON = 'compression';

export const TOO_SHORT_NOTICE = `There is not enough conversation to compress yet (it needs at least ${MIN_MESSAGES_TO_COMPRESS} messages).`;
export const NOTHING_TO_COMPRESS_NOTICE = 'Nothing to compress yet: the conversation is still short enough to keep as it is.';
export const STILL_LARGE_WARNING =
  "⚠️ The conversation is still close to the model's limit after compressing. Send /new to start fresh if replies start failing.";

export interface AutoCompressOptions {
  store: SessionStore;
  sessionKey: string;
  /** The key's current session. */
  session: Session;
  /** Writes the summary (the side-task chain: the auxiliary model, then the session's own). */
  provider: Provider;
  /** Tokens; see `contextWindowOf`. */
  contextWindow: number;
  log: Logger;
  /** /compress: compress whatever the size (still needs MIN_MESSAGES_TO_COMPRESS messages). */
  force?: boolean;
  /** Runs just before the summary call, when there is something to summarise (the memory flush). */
  beforeCompress?: () => Promise<void>;
  signal?: AbortSignal;
}

export interface AutoCompressResult {
  compressed: boolean;
  /** The session to continue in: the child when compressed, else the one passed in. */
  session: Session;
  /** One short line for the user (also why nothing happened, on /compress). */
  notice?: string;
  /** Set when the history is still at 95 % of the window or more after compressing. */
  warning?: string;
}

/**
 * The window a turn budgets against: HERALD_CONTEXT_WINDOW, else the model table, lowered by limits learnt for
 * this model on this provider (`windows`: the store-backed ones every worker shares).
 */
export function contextWindowOf(provider: Provider, override?: number, windows: ContextWindows = processContextWindows): number {
  return windows.effective(provider, override);
}

/** The session's size: the last prompt the API reported, else characters / 4 of its history. */
function sessionTokens(session: Session, history: readonly ChatMessage[]): number {
  return session.lastPromptTokens !== null && session.lastPromptTokens > 0 ? session.lastPromptTokens : estimateMessagesTokens(history);
}

/** The 85 % rule (or 400 messages), never under 4 messages. */
export function needsCompression(tokens: number, messageCount: number, window: number): boolean {
  if (messageCount < MIN_MESSAGES_TO_COMPRESS) return false;
  return tokens >= gatewayThreshold(window) || messageCount >= MAX_MESSAGES_BEFORE_COMPRESS;
}

export async function autoCompressIfNeeded(opts: AutoCompressOptions): Promise<AutoCompressResult> {
  const { store, session, contextWindow: window, log } = opts;
  const unchanged = (notice?: string): AutoCompressResult => ({ compressed: false, session, ...(notice ? { notice } : {}) });
  // The per-message path: decide from the session row's counters when they suffice, without reading the transcript.
  if (!opts.force) {
    if (session.messageCount < MIN_MESSAGES_TO_COMPRESS) return unchanged();
    const known = session.lastPromptTokens !== null && session.lastPromptTokens > 0;
    if (known && !needsCompression(session.lastPromptTokens as number, session.messageCount, window)) return unchanged();
  }
  const history = await store.getHistory(session.id);
  if (history.length < MIN_MESSAGES_TO_COMPRESS) return unchanged(opts.force ? TOO_SHORT_NOTICE : undefined);
  const tokens = sessionTokens(session, history);
  if (!opts.force && !needsCompression(tokens, history.length, window)) return unchanged();

  const before = opts.beforeCompress;
  const result = await compressHistory(history, {
    provider: opts.provider,
    contextWindow: window,
    thresholdTokens: gatewayThreshold(window),
    signal: opts.signal,
    ...(opts.force ? { minTailMessages: FORCED_TAIL_MESSAGES, tailBudgetTokens: 0 } : {}),
    // Only once there is a middle to summarise: a flush before a compression that does nothing is a wasted call.
    ...(before ? { beforeSummary: () => before().catch((err: unknown) => log.warn({ err }, 'before-compression hook failed; compressing anyway')) } : {}),
  });
  if (!result.compressed) {
    log.info({ messages: history.length, tokens }, 'compression found nothing to summarise');
    return unchanged(opts.force ? NOTHING_TO_COMPRESS_NOTICE : undefined);
  }
  if (result.summaryError) log.warn({ err: result.summaryError }, 'summary call failed; used the excerpt summary');

  // Stopped meanwhile (a /compress whose session lock was lost): write nothing.
  opts.signal?.throwIfAborted();
  const child = await continueInChildSession(store, opts.sessionKey, session, result.messages);
  if (!child) return unchanged();
  // The summary call is this session's cost.
  await store.addUsage(child.id, { ...result.usage });
  log.info({ from: session.id, to: child.id, before: history.length, after: result.messages.length, tokens }, 'session compressed');
  const out: AutoCompressResult = {
    compressed: true,
    session: (await store.getSession(child.id)) ?? child,
    notice: `🗜️ Compressed the conversation to keep it going (${history.length} → ${result.messages.length} messages).`,
  };
  if (result.tokensAfter >= gatewayWarningThreshold(window)) out.warning = STILL_LARGE_WARNING;
  return out;
}

/**
 * The turn runner's call before a turn: compresses when the 85 % rule says so and tells the user in one short
 * message. Never fails the turn: on any error (an interrupt during the summary call included) the turn goes on
 * in the session it had.
 */
export async function compressBeforeTurn(p: {
  store: SessionStore;
  sessionKey: string;
  session: Session;
  agent: { primary: Provider; contextWindow?: number };
  /** Writes the summary (the side-task chain); the agent's primary when absent. */
  summarizer?: Provider | null;
  /** Learnt windows (store-backed in the gateway); in-process when absent. */
  windows?: ContextWindows;
  log: Logger;
  signal?: AbortSignal;
  notify: (text: string) => Promise<void>;
  /** Runs just before compressing (the memory flush: the model's one chance to save what matters). */
  beforeCompress?: () => Promise<void>;
}): Promise<Session> {
  try {
    const contextWindow = contextWindowOf(p.agent.primary, p.agent.contextWindow, p.windows);
    const r = await autoCompressIfNeeded({ ...p, provider: p.summarizer ?? p.agent.primary, contextWindow });
    const text = [r.notice, r.warning].filter(Boolean).join('\n');
    if (r.compressed && text) await p.notify(text).catch((err: unknown) => p.log.warn({ err }, 'compression notice not delivered'));
    return r.session;
  } catch (err) {
    p.log.warn({ err }, 'compression before the turn failed; continuing uncompressed');
    // A failure after the child was created leaves the key on the child: continue there.
    const current = await p.store.currentSession(p.sessionKey).catch(() => null);
    return current && current.endedAt === null ? current : p.session;
  }
}

/**
 * Ends `parent` (reason compression) and starts its child with `messages`, in one move of the key. Null when the
 * key no longer points at `parent` (a /new got there first): then nothing is changed.
 */
export async function continueInChildSession(
  store: SessionStore,
  sessionKey: string,
  parent: Session,
  messages: readonly ChatMessage[],
): Promise<Session | null> {
  // One transaction: a crash never leaves the key on a child session without its history.
  return store.transaction(async () => {
    if ((await store.currentSession(sessionKey))?.id !== parent.id) return null;
    const init: NewSessionInit = {
      source: parent.source,
      parentSessionId: parent.id,
      endPreviousReason: COMPRESSION_END_REASON,
      ...(parent.userId !== null ? { userId: parent.userId } : {}),
      ...(parent.chatId !== null ? { chatId: parent.chatId } : {}),
      ...(parent.model !== null ? { model: parent.model } : {}),
      ...(parent.systemPrompt !== null ? { systemPrompt: parent.systemPrompt } : {}),
      ...(parent.profile !== null ? { profile: parent.profile } : {}),
      // Inside the write transaction no other process can take this title between choosing and using it.
      ...(parent.title ? { title: await store.nextLineageTitle(parent.title) } : {}),
    };
    const child = await store.startNewSession(sessionKey, init);
    await store.appendMessages(child.id, messages);
    return (await store.getSession(child.id)) ?? child;
  });
}
