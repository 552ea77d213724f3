/**
 * What the worker and the turn runner agree on: what a turn is given (TurnContext), what it hands back
 * (TurnResult, TurnReport), and the worker's callbacks around it. The worker itself is worker.ts.
 */
import type { TurnStatus } from '@herald/agent-core';
import type { Logger } from '../logger.js';
import type { DeliveryCheck, MailboxEntry } from './mailbox.js';

/** What the worker hands the turn runner. */
export interface TurnContext {
  sessionKey: string;
  /** The entries this turn answers (more than one when interrupt mode merged pending messages). */
  entries: MailboxEntry[];
  /** The turn id used for the outbox: the id of the last entry. */
  turnId: string;
  /** This worker's fencing token for the session: every outbox write and send carries it (see store turns.ts). */
  fence: number;
  signal: AbortSignal;
  /** True while this worker still holds the session and no later message interrupted this turn. */
  canDeliver(): Promise<boolean>;
  /**
   * Asked once, just before the final reply goes out: why not, when it cannot — `stale` (interrupted or stopped:
   * never send) or `lock_lost` (another worker will). On `ok` the session counts as replying, so a message arriving
   * from then until the turn is acknowledged is not told it waits (Mailbox.mayAcknowledge).
   */
  deliveryCheck(): Promise<DeliveryCheck>;
  /** Texts a user sent while the turn ran (steer mode), taken once each. */
  takeSteerMessages(): string[];
  /** Marks agent activity (an LLM delta, a tool starting or ending); the watchdog aborts a turn without any. */
  touch(): void;
  /** Called when the turn's first model request goes out: it gives up its place among the preparing turns. */
  prepared?(): void;
  log: Logger;
}

/** What a turn leaves for after its mailbox entry is acknowledged (the session is free again by then). */
export interface TurnResult {
  /** Cosmetics that must not hold the session: the reaction swap on the user's message, say. */
  afterAck?: () => Promise<void>;
  /** What the turn came to, for metrics (ops/instrument.ts): nothing has to read it back from the store. */
  report?: TurnReport;
}

/** A turn's own account of how it went (the runner knows it from its writes, which return the outbox row). */
export interface TurnReport {
  /** The outbox said the turn had finished before this run (a recovered job): not a new turn. */
  finishedBefore?: boolean;
  /** The turn's outbox status after this run; absent when the runner cannot tell (then it is read from the store). */
  status?: TurnStatus;
  /** Compressed child sessions the conversation moved to during the turn (before it or inside the loop). */
  compressions?: number;
}

export type TurnRunner = (ctx: TurnContext) => Promise<TurnResult | void>;

/**
 * Told once a turn's entries have left the mailbox: answered, failed, stopped or withdrawn (not when the turn was
 * handed to another worker, which then runs it again). The HTTP API ends its waiting requests here.
 */
export type TurnEndHandler = (entries: MailboxEntry[]) => Promise<void>;

/** A turn the watchdog gave up on: called once, so the caller can fence it out and tell the user. */
export type AbandonHandler = (turn: { sessionKey: string; turnId: string; entries: MailboxEntry[]; log: Logger }) => Promise<void>;
