/**
 * Progress reactions on the user's messages, for platforms whose egress declares `turnReactions` (Slack: 👀 while
 * the turn runs, ✅ once its reply is delivered). They are added when a worker starts the turn, not when the
 * message is queued, so 👀 means "being worked on". Best effort: a reaction that fails never fails the turn.
 */
import type { PlatformEgress } from '@herald/adapters';
import type { Logger } from '../logger.js';

/** The message a reaction goes on: the conversation (for the channel) and the platform's id of the message. */
export interface ReactionTarget {
  conversationId: string;
  platformMessageId: string;
}

export interface TurnProgress {
  /** The reply was delivered: 👀 → ✅. */
  done(): Promise<void>;
  /** The turn ended without an answer of its own (interrupted, stopped, stale): 👀 removed, nothing added. */
  clear(): Promise<void>;
}

const NO_PROGRESS: TurnProgress = { done: async () => {}, clear: async () => {} };

/** Adds the working reaction to every message the turn answers, now; the returned handle finishes it. */
export function showTurnProgress(egress: PlatformEgress, targets: ReactionTarget[], log: Logger): TurnProgress {
  const emoji = egress.turnReactions;
  if (emoji === undefined || targets.length === 0) return NO_PROGRESS;
  const react = async (t: ReactionTarget, name: string, remove = false): Promise<void> => {
    try {
      await egress.react(t.conversationId, t.platformMessageId, name, remove);
    } catch (err) {
      log.debug({ err, messageId: t.platformMessageId, emoji: name, remove }, 'progress reaction failed; ignored');
    }
  };
  // Not awaited by the caller, so the LLM call does not wait on it; finishing awaits it, so 👀 is never re-added
  // after it was removed.
  const working = Promise.all(targets.map((t) => react(t, emoji.working)));
  let finished = false;
  const finish = async (withDone: boolean): Promise<void> => {
    if (finished) return;
    finished = true;
    await working;
    await Promise.all(
      targets.map(async (t) => {
        await react(t, emoji.working, true);
        if (withDone) await react(t, emoji.done);
      }),
    );
  };
  return { done: () => finish(true), clear: () => finish(false) };
}
