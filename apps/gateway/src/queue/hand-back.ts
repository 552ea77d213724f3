/**
 * How a stopping worker ends (worker.ts, close): the drain's one decision loop (`drainOutcome`), then the hand-back
 * of the jobs it could not finish in time: each session lock is released and each job put back to wait, so another worker takes the turn over now instead of when the leases
 * run out. The turn that ignored its abort may still be running here: the next holder's larger fence refuses its
 * store writes, and its delivery check finds the lock gone, so it can neither write nor send.
 */
import type { Job } from 'bullmq';
import type { Mailbox } from './mailbox.js';
import type { TurnJobData } from './producer.js';

/** After the drain, how long aborted turns may take to hand their jobs back (Redis answering). */
export const HANDOVER_GRACE_MS = 1_000;
/** While closing, how often the worker looks whether it still has anything to wait for. */
const CLOSE_POLL_MS = 50;

/** How a stopping worker's wait ended, and how many sessions' turns it cut short at the drain's end. */
export interface DrainOutcome {
  outcome: 'closed' | 'redis' | 'timeout';
  cutShort: number;
}

/**
 * Waits for BullMQ's close (`closing`). One loop decides everything — cut the turns short at the drain's end
 * (`cutShort`, once), give up on a dead Redis (once nothing runs or the turns were cut short), or on the grace after
 * the drain — so the order of those decisions never depends on which of two timers fires first.
 */
export async function drainOutcome(p: {
  closing: Promise<unknown>;
  drainMs: number;
  redisReady: () => boolean;
  running: () => number;
  cutShort: () => number;
}): Promise<DrainOutcome> {
  const started = Date.now();
  let closed = false;
  const closing = p.closing.then(() => void (closed = true));
  closing.catch(() => undefined);
  let cut = -1;
  const outcome = await new Promise<DrainOutcome['outcome']>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const look = (): void => {
      clearTimeout(timer);
      const elapsed = Date.now() - started;
      if (closed) return resolve('closed');
      if (cut < 0 && elapsed >= p.drainMs) cut = p.cutShort();
      if (!p.redisReady() && (p.running() === 0 || cut >= 0)) return resolve('redis');
      if (elapsed >= p.drainMs + HANDOVER_GRACE_MS) return resolve('timeout');
      const untilDrain = p.drainMs - elapsed;
      timer = setTimeout(look, untilDrain > 0 ? Math.min(CLOSE_POLL_MS, untilDrain) : CLOSE_POLL_MS);
    };
    void closing.then(look, () => undefined);
    look();
  });
  return { outcome, cutShort: Math.max(cut, 0) };
}

/** A job a worker is processing: its BullMQ lock token and, once taken, its session lock. */
export interface HeldJob {
  jobId: string;
  sessionKey: string;
  job: Job<TurnJobData>;
  jobToken: string | undefined;
  lockToken: string | null;
}

/** Hands the jobs back within `withinMs`; returns how many went back to wait. */
export async function handBack(held: HeldJob[], mailbox: Mailbox, withinMs: number): Promise<number> {
  const one = async (h: HeldJob): Promise<boolean> => {
    if (h.lockToken !== null) await mailbox.release(h.sessionKey, h.lockToken);
    // Throws when BullMQ no longer lets this worker move it (its job lock is gone: it is redelivered anyway).
    await h.job.moveToWait(h.jobToken);
    return true;
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean[]>((resolve) => (timer = setTimeout(() => resolve([]), withinMs)));
  try {
    const done = await Promise.race([Promise.all(held.map((h) => one(h).catch(() => false))), deadline]);
    return done.filter(Boolean).length;
  } finally {
    clearTimeout(timer);
  }
}

/** The shutdown's one log line about what it could not finish: why, what it held, and what becomes of it. */
export function abandonMessage(p: { why: 'redis' | 'timeout'; held: HeldJob[]; handed: number; cutShort: number; jobLockMs: number }): string {
  const lockS = Math.round(p.jobLockMs / 1000);
  const cause = p.why === 'redis' ? 'Redis is unreachable' : 'the drain timeout passed';
  if (p.held.length === 0) return `shutdown: ${cause}; no job was in hand`;
  const redelivery =
    p.why === 'redis'
      ? `once Redis is back, the queue redelivers them when their job lock expires (${lockS} s)`
      : p.handed === p.held.length
        ? 'handed back to the queue: another worker takes them over now'
        : `${p.handed} handed back at once; the queue redelivers the rest when their job lock expires (${lockS} s)`;
  const sessions = [...new Set(p.held.map((h) => h.sessionKey))].join(', ');
  const turns = p.cutShort > 0 ? ` (${p.cutShort} turn(s) cut short at the drain timeout)` : '';
  return `shutdown: ${cause}; abandoned ${p.held.length} job(s) of session(s) ${sessions}${turns}; ${redelivery}`;
}
