/**
 * What the worker and the turn runner agree on: what a turn is given (TurnContext), what it hands back
 * (TurnResult, TurnOutcome), and the worker's callbacks around it. The worker itself is worker.ts.
 */
import type { Logger } from '../support/logger.js';
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
  /** What the turn came to, for metrics (turn/instrument.ts) and the worker's log: nothing has to read the store. */
  outcome?: TurnOutcome;
}

/**
 * How a run of a turn ended, as the runner knows it from its own writes (each returns the outbox row):
 * - `delivered`: the reply went out; `failed`: the turn answered with an error text (or could not be run);
 * - `interrupted`: stopped or superseded by the user (nothing sent); `abandoned`: handed to another worker
 *   (shutdown, a lost lock), which runs it again;
 * - `finished-before`: a recovered job whose turn had finished already (not a new turn);
 * - `unknown`: the runner cannot tell (nothing was left to send, an exception path): the outbox is read back.
 */
export type TurnOutcomeKind = 'delivered' | 'interrupted' | 'failed' | 'abandoned' | 'finished-before' | 'unknown';

export interface TurnOutcome {
  kind: TurnOutcomeKind;
  /** Compressed child sessions the conversation moved to during the turn (before it or inside the loop). */
  compressions: number;
  /** What the turn's calls cost, as recorded with it (absent when it made none it knows of). */
  spend?: { costUsd: number; apiCalls: number };
}

export type TurnRunner = (ctx: TurnContext) => Promise<TurnResult | void>;

/** Something done around one run of a turn (a policy's body, e.g. the metrics of turn/instrument.ts). */
export type AroundTurn = (ctx: TurnContext, run: () => Promise<TurnResult | void>) => Promise<TurnResult | void>;

/**
 * Told once a turn's entries have left the mailbox: answered, failed, stopped or withdrawn (not when the turn was
 * handed to another worker, which then runs it again). The HTTP API ends its waiting requests here.
 */
export type TurnEndHandler = (entries: MailboxEntry[]) => Promise<void>;

/** A turn the watchdog gave up on: called once, so the caller can fence it out and tell the user. */
export type AbandonHandler = (turn: { sessionKey: string; turnId: string; entries: MailboxEntry[]; log: Logger }) => Promise<void>;
