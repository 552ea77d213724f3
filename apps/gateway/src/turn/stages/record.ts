/**
 * Stage 4 — record: the turn's messages, its usage and spend, the budgets and the recorded reply (with its files)
 * commit in one transaction, so a crash leaves all or none. An interrupted turn records what it did (tool results)
 * and what it cost, and no reply.
 */
import type { ConversationResult, Session, SessionStore, Turn, UsageDelta } from '@herald/agent-core';
import type { TurnSpend } from '../../features/budgets/turn-spend.js';
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
  // which are in the session's columns already; the cost: all of them (features/budgets/turn-spend.ts).
  const usage = { ...spend.uncountedTokens(), ...spend.costs(), lastPromptTokens: result.lastPromptTokens, apiCalls: finished.apiCalls };
  // Most turns, in one store call (one statement on PostgreSQL): no compression inside the turn, no files, and no
  // budget whose 80 % notice must read the spend before the reply (with the notice under it) is written.
  if (!result.compactedHistory && finished.files.length === 0 && !controls.budgets.enabled) {
    const spent = controls.budgets.recordWrite(spender, meter.usage, meter.costUsd);
    const turn = await store.recordTurn({
      turnId: ctx.turnId,
      fence: ctx.fence,
      sessionId: prepared.session.id,
      messages: result.newMessages,
      platformMessageId: open.last.platformMessageId,
      usage,
      reply: finished.reply,
      claim: finished.check === 'ok',
      alongside: spent ? [spent] : [],
    });
    spend.recorded();
    return { session: prepared.session, turn, text: finished.reply, compressions: prepared.compressions };
  }
  const recorded = await store.transaction(async () => {
    const session = await persistTurn(store, {
      sessionKey: open.sessionKey,
      session: prepared.session,
      result,
      turnId: ctx.turnId,
      platformMessageId: open.last.platformMessageId,
      usage,
    });
    // Budgets: this turn's spend, and the 80 % notice when it crossed it (once, whichever worker is first).
    await controls.budgets.record(spender, meter.usage, meter.costUsd);
    const notices = await controls.budgets.notices(spender);
    const text = notices.length > 0 ? `${finished.reply}\n\n${notices.join('\n')}` : finished.reply;
    const turn = await store.recordReply(ctx.turnId, text, ctx.fence, finished.files, { claim: finished.check === 'ok' });
    return { session, turn, text };
  });
  spend.recorded();
  const compressions = prepared.compressions + (recorded.session !== prepared.session ? 1 : 0);
  return { ...recorded, compressions };
}

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
