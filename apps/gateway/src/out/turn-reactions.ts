/**
 * Status reactions on the user's messages (HERALD_STATUS_REACTIONS / <PLATFORM>_STATUS_REACTIONS; Slack by default):
 * 👀 when a worker takes the messages of a turn (a message that waits behind a running turn gets it from the ingress
 * as it is queued: edges/ingress/router.ts), ⚙️ added while tools run, and at the end both removed and ✅ (or ⚠️
 * when the turn ended in an error) added; a turn that ends without an answer of its own (interrupted, stopped)
 * just loses its reactions. Telegram keeps one reaction per message, so each stage there replaces the last.
 * Best effort: a reaction that fails never fails the turn.
 */
import type { PlatformEgress, StatusReactions } from '@herald/adapters';
import type { Logger } from '../support/logger.js';

/** The message a reaction goes on: the conversation (for the channel) and the platform's id of the message. */
export interface ReactionTarget {
  conversationId: string;
  platformMessageId: string;
}

export interface TurnProgress {
  /** Tools started running (only the first call does anything). */
  tools(): void;
  /** The reply was delivered: 👀 (and ⚙️) → ✅, or ⚠️ when `failed`. */
  done(failed?: boolean): Promise<void>;
  /** The turn ended without an answer of its own (interrupted, stopped, stale): reactions removed, nothing added. */
  clear(): Promise<void>;
}

const NO_PROGRESS: TurnProgress = { tools: () => {}, done: async () => {}, clear: async () => {} };

/** Adds the queued reaction to every message the turn answers, now; the returned handle moves it along. */
export function showTurnProgress(egress: PlatformEgress, emoji: StatusReactions | undefined, targets: ReactionTarget[], log: Logger): TurnProgress {
  if (emoji === undefined || targets.length === 0) return NO_PROGRESS;
  const react = async (t: ReactionTarget, name: string, remove = false): Promise<void> => {
    if (name === '') return;
    try {
      await egress.react(t.conversationId, t.platformMessageId, name, remove);
    } catch (err) {
      log.debug({ err, messageId: t.platformMessageId, emoji: name, remove }, 'status reaction failed; ignored');
    }
  };
  const all = (fn: (t: ReactionTarget) => Promise<void>): Promise<void> => Promise.all(targets.map(fn)).then(() => undefined);
  // Not awaited by the caller, so the LLM call does not wait on it; every later stage waits for the one before, so
  // a reaction is never re-added after it was removed.
  let chain = all((t) => react(t, emoji.queued));
  let toolsShown = false;
  let finished = false;
  const finish = async (end: string | null): Promise<void> => {
    if (finished) return;
    finished = true;
    chain = chain.then(() =>
      all(async (t) => {
        await react(t, emoji.queued, true);
        if (toolsShown) await react(t, emoji.tools, true);
        if (end !== null) await react(t, end);
      }),
    );
    await chain;
  };
  return {
    tools() {
      if (toolsShown || finished || emoji.tools === '') return;
      toolsShown = true;
      chain = chain.then(() => all((t) => react(t, emoji.tools)));
    },
    done: (failed = false) => finish(failed ? emoji.error : emoji.done),
    clear: () => finish(null),
  };
}
