/**
 * A turn as the worker holds it (RunningTurn: what /stop, interrupts, steers, withdrawals and the watchdog reach), a
 * job's hold on its session (Hold), and the TurnContext the runner is given from them. The worker is worker.ts.
 */
import type { Logger } from '../support/logger.js';
import type { Mailbox, MailboxEntry } from './mailbox.js';
import type { TurnContext, TurnResult } from './turn-context.js';
import type { PendingEntry } from './turn-entries.js';

export interface RunningTurn {
  sessionKey: string;
  seq: number;
  /** The fencing token the turn's job holds the session with (a /stop names the fence it stops below). */
  fence: number;
  /** Ids of the entries the turn answers (a withdrawal names one). */
  entryIds: Set<string>;
  /** A scheduled task's run: a user's message neither interrupts nor steers it (it queues behind it). */
  scheduled: boolean;
  lastActivity: number;
  controller: AbortController;
  steer: PendingEntry[];
  absorbed: string[];
}

/** A job's hold on its session: the lock (lost once a renewal fails) and the turn in hand, which a lost lock aborts. */
export interface Hold {
  sessionKey: string;
  lockToken: string;
  fence: number;
  lost: boolean;
  current: RunningTurn | null;
}

/** A turn the worker ran: its entries, its running state (what it absorbed) and what it returned. */
export interface RanTurn {
  entries: MailboxEntry[];
  turn: RunningTurn;
  result: TurnResult | void;
}

/** What the turn runner is given: the session, the entries, the fence and this worker's view of the turn. */
export function turnContextOf(mailbox: Mailbox, hold: Hold, turn: RunningTurn, entries: MailboxEntry[], headSeq: number, log: Logger): TurnContext {
  const { sessionKey, lockToken } = hold;
  return {
    sessionKey,
    entries,
    turnId: entries[entries.length - 1].id,
    fence: hold.fence,
    signal: turn.controller.signal,
    canDeliver: () => mailbox.canDeliver(sessionKey, lockToken, turn.seq),
    deliveryCheck: () => mailbox.deliveryCheck(sessionKey, lockToken, turn.seq, headSeq),
    takeSteerMessages: () => {
      const taken = turn.steer.splice(0);
      turn.absorbed.push(...taken.map((t) => t.raw));
      return taken.map((t) => t.entry.payload.text);
    },
    touch: () => {
      turn.lastActivity = Date.now();
    },
    log,
  };
}
