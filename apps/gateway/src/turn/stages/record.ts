/**
 * Stage 4 — record: the turn's messages, its usage and spend, the budgets and the recorded reply (with its files)
 * commit together in one store call (store/turns.ts, `recordTurn`), so a crash leaves all or none. An interrupted turn records what it did (tool results)
 * and what it cost, and no reply.
 */
import type { ConversationResult, Session, SessionStore, SqlWrite, Turn, UsageDelta } from '@herald/agent-core';
import type { TurnSpend } from '../../features/budgets/meter.js';
import { isWithdrawnTurn, WITHDRAWN_REASON } from '../../queue/withdraw.js';
import { continueInChildSession } from '../auto-compress.js';
import type { TurnDeps } from './deps.js';
import type { FinishedTurn } from './finish.js';
import type { OpenTurn } from './open.js';
import type { PreparedTurn } from './prepare.js';

export interface RecordedTurn {
  /** The session the turn's messages are in (a child when the loop compressed inside the turn). */
  session: Session;
  /** The outbox row the record left (claimed for sending when the check said ok). */
  turn: Turn;
  /** The reply with the budgets' notices under it: what is sent. */
  text: string;
  /** Compressions of the whole turn: before it and inside the loop. */
  compressions: number;
}

export async function recordTurn(
  deps: TurnDeps,
  open: OpenTurn,
  prepared: PreparedTurn,
  result: ConversationResult,
  finished: FinishedTurn,
  spend: TurnSpend,
): Promise<RecordedTurn> {
  const { store, controls } = deps;
  const { ctx, spender } = open;
  const { meter } = prepared;
  // Tokens: every call the turn made (its loop, subagents, side tasks, its files) but a compression's before it,
  // which are in the session's columns already; the cost: all of them (features/budgets/meter.ts TurnSpend).
  const usage = { ...spend.uncountedTokens(), ...spend.costs(), lastPromptTokens: result.lastPromptTokens, apiCalls: finished.apiCalls };
  let session = prepared.session;
  const turn = await store.recordTurn({
    turnId: ctx.turnId,
    fence: ctx.fence,
    sessionId: session.id,
    messages: result.newMessages,
    platformMessageId: open.last.platformMessageId,
    usage,
    // With a budget set, its 80 % notice (once, whichever worker is first) goes under the reply: read after the spend.
    reply: controls.budgets.enabled ? async () => withNotices(finished.reply, await controls.budgets.notices(spender)) : finished.reply,
    claim: finished.check === 'ok',
    alongside: spentWrites(controls.budgets.recordWrite(spender, meter.usage, meter.costUsd)),
    files: finished.files,
    // Compressed inside the loop: the compressed history (ending with the turn's messages) goes to a child session.
    // From the turn's session each time: a record that runs again (the database was busy) starts over.
    ...(result.compactedHistory && {
      persist: async () => {
        const p = { sessionKey: open.sessionKey, session: prepared.session, result, turnId: ctx.turnId, platformMessageId: open.last.platformMessageId, usage };
        session = await persistTurn(store, p);
      },
    }),
  });
  spend.recorded();
  const compressions = prepared.compressions + (session !== prepared.session ? 1 : 0);
  return { session, turn, text: turn.reply ?? finished.reply, compressions };
}

const withNotices = (reply: string, notices: readonly string[]): string => (notices.length > 0 ? `${reply}\n\n${notices.join('\n')}` : reply);
const spentWrites = (write: SqlWrite | null): SqlWrite[] => (write ? [write] : []);

/**
 * Interrupted or stopped by the user: keeps what the turn did (tool results) and what it cost; sends nothing. A turn
 * whose sender took its question back (queue/withdraw.ts) keeps only what it cost: none of its messages, so the
 * question never reaches a later model request.
 */
export async function recordInterrupted(
  deps: TurnDeps,
  open: OpenTurn,
  prepared: PreparedTurn,
  result: ConversationResult,
  spend: TurnSpend,
): Promise<{ compressions: number }> {
  const { store, controls } = deps;
  const { ctx, spender } = open;
  const { meter } = prepared;
  const abort: unknown = ctx.signal.reason;
  const withdrawn = isWithdrawnTurn(ctx.entries, abort);
  const persisted = await store.transaction(async () => {
    // What the interrupted turn cost still counts: the session's usage and the budgets.
    const usage = {
      ...spend.uncountedTokens(),
      ...spend.costs(),
      apiCalls: result.apiCalls + prepared.media.calls.length,
      ...(result.lastPromptTokens && !withdrawn ? { lastPromptTokens: result.lastPromptTokens } : {}),
    };
    let persisted = prepared.session;
    if (withdrawn) await store.addUsage(prepared.session.id, usage);
    else
      persisted = await persistTurn(store, {
        sessionKey: open.sessionKey,
        session: prepared.session,
        result,
        turnId: ctx.turnId,
        platformMessageId: open.last.platformMessageId,
        usage,
      });
    const reason = withdrawn ? WITHDRAWN_REASON : abort instanceof Error ? abort.message : 'interrupted';
    await store.markTurn(ctx.turnId, 'interrupted', ctx.fence, reason);
    await controls.budgets.record(spender, meter.usage, meter.costUsd);
    return persisted;
  });
  spend.recorded();
  return { compressions: prepared.compressions + (persisted !== prepared.session ? 1 : 0) };
}

/**
 * Persists a finished turn: its messages are appended, or — when the loop compressed inside the turn — the
 * compressed history (which ends with the turn's messages) goes into a child session the key moves to.
 * Returns the session the turn's messages are in.
 */
export async function persistTurn(
  store: SessionStore,
  p: {
    sessionKey: string;
    session: Session;
    result: Pick<ConversationResult, 'newMessages' | 'compactedHistory'>;
    turnId: string;
    platformMessageId?: string;
    /** The turn's usage, added to the session its messages land in. */
    usage?: UsageDelta;
  },
): Promise<Session> {
  if (p.result.compactedHistory) {
    const child = await continueInChildSession(store, p.sessionKey, p.session, p.result.compactedHistory);
    if (child) {
      if (p.usage) await store.addUsage(child.id, p.usage);
      return child;
    }
  }
  await store.appendMessages(p.session.id, p.result.newMessages, { turnId: p.turnId, platformMessageId: p.platformMessageId, usage: p.usage });
  return p.session;
}
