/**
 * A turn as the worker holds it (RunningTurn: what /stop, interrupts, steers, withdrawals and the watchdog reach), a
 * job's hold on its session (Hold), the TurnContext the runner is given from them, and the inactivity watchdog of a
 * running turn (runWatched: no agent activity for `idleMs` aborts it; a turn that still does not end within
 * `graceMs` — a tool ignoring its AbortSignal — is abandoned so the session moves on). The worker is worker.ts.
 *
 * And which mailbox entries one turn answers, besides the head (entriesJoiningHead): in interrupt mode what piled up
 * while the last turn ran (nothing is dropped), and in every mode the other parts of a message the head is a part of
 * (an album, a split text: queue/parts.ts). A scheduled task's run is always a turn of its own, and stays in the
 * mailbox while messages are merged. Also which entry a job names, and which entries may steer a running turn.
 */
import type { Logger } from '../support/logger.js';
import type { Mailbox, MailboxEntry } from './mailbox.js';
import { TurnAbort } from './turn-abort.js';
import type { TurnContext, TurnResult } from './turn-context.js';
import { PARTS_QUIET_MS, gatherParts } from './parts.js';
import type { BusyInputMode, TurnJobData } from './producer.js';

export const DEFAULT_WATCHDOG_MS = 1_800_000;
/** After the watchdog aborts a turn, how long it may take to wind down before the worker stops waiting for it. */
export const WATCHDOG_GRACE_MS = 5_000;

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

export interface WatchdogLimits {
  idleMs: number;
  graceMs: number;
}

/** What the watchdog watches: when the turn last showed activity, and how to abort it. */
export interface WatchedTurn {
  lastActivity: number;
  controller: AbortController;
}

/** `run`'s outcome, or undefined once the turn was abandoned (after `abandon` took its write and send access). */
export async function runWatched(
  turn: WatchedTurn,
  limits: WatchdogLimits,
  log: Logger,
  run: Promise<TurnResult | void>,
  abandon: () => Promise<void>,
): Promise<TurnResult | void> {
  const limit = limits.idleMs;
  let timer: NodeJS.Timeout | undefined;
  const abandoned = new Promise<'abandoned'>((resolve) => {
    const check = (): void => {
      const idle = Date.now() - turn.lastActivity;
      if (idle < limit) {
        timer = setTimeout(check, limit - idle);
        return;
      }
      log.warn({ idleMs: idle }, 'turn watchdog: no agent activity; aborting the turn');
      turn.controller.abort(new TurnAbort('watchdog'));
      timer = setTimeout(() => {
        log.error('turn did not end after the watchdog abort; abandoning it (it can no longer write or send)');
        resolve('abandoned');
      }, limits.graceMs);
    };
    timer = setTimeout(check, limit);
  });
  run.catch(() => undefined); // an abandoned turn that fails later must not become an unhandled rejection
  try {
    const outcome = await Promise.race([run, abandoned]);
    if (outcome !== 'abandoned') return outcome;
    await abandon().catch((err: unknown) => log.warn({ err }, 'could not fence out the abandoned turn'));
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

export type PendingEntry = { raw: string; entry: MailboxEntry };

export interface TurnEntriesInput {
  mailbox: Mailbox;
  sessionKey: string;
  head: MailboxEntry;
  mode: BusyInputMode;
  partsQuietMs?: number;
  /** Ends the waiting for parts early (shutting down, session lost). */
  stop: () => boolean;
}

/** The entries after the head that the turn answers too, in arrival order. */
export async function entriesJoiningHead(input: TurnEntriesInput): Promise<PendingEntry[]> {
  const { mailbox, sessionKey, head } = input;
  if (head.payload.scheduled !== undefined) return [];
  // The parts of a message reach the mailbox one by one: the rest are waited for and answered with the head.
  const parts = head.payload.partOf !== undefined ? await gatherParts(mailbox, sessionKey, head, input.partsQuietMs ?? PARTS_QUIET_MS, input.stop) : [];
  if (input.mode !== 'interrupt') return parts;
  const together = mergeable(
    head,
    (await mailbox.pending(sessionKey)).filter((m) => !m.entry.payload.scheduled),
  );
  return [...together, ...parts.filter((a) => !together.some((t) => t.raw === a.raw))].sort((a, b) => a.entry.seq - b.entry.seq);
}

/**
 * The pending entries one turn may answer together with the head: those in a row that reply to the same place.
 * A message that waits for an answer of its own elsewhere (each HTTP API request has its own) is never merged.
 */
function mergeable(head: MailboxEntry, pending: PendingEntry[]): PendingEntry[] {
  const out: PendingEntry[] = [];
  for (const p of pending) {
    if (p.entry.payload.conversationId !== head.payload.conversationId) break;
    out.push(p);
  }
  return out;
}

/** Steering passes text only: a message with files stays in the mailbox and is a turn of its own next. */
export function steerable(raw: string): PendingEntry | undefined {
  const entry = JSON.parse(raw) as MailboxEntry;
  return entry.payload.attachments?.length ? undefined : { raw, entry };
}

/** The entry a job was added for; jobs added before job data was trimmed carry the whole entry instead. */
export function entryOf(data: TurnJobData | { sessionKey: string; entry: string }): { entryId: string; seq: number } {
  if (!('entry' in data)) return data;
  const entry = JSON.parse(data.entry) as MailboxEntry;
  return { entryId: entry.id, seq: entry.seq };
}
