/**
 * How long a dead worker's turn waits before another worker takes it over: the leases and the checks that notice
 * they ran out, tuned together (docs/architecture.md, "Taking over from a dead worker", gives the arithmetic).
 *
 * A SIGKILLed worker leaves two leases behind: its session lock (mailbox.ts) and its BullMQ job lock. The job is
 * moved back to wait by BullMQ's stalled check once its lock is gone: at most JOB_LOCK + STALLED_INTERVAL after the
 * kill. The job then finds the session lock free (it is no longer than that) or waits exactly until it expires.
 * With these defaults a killed worker's turn is running again within about 4.5 s, its reply follows one model call
 * later. The settings (support/config/settings.ts) default to the same figures; the session lock's lease
 * (HERALD_SESSION_LOCK_MS, 4 s) is renewed every third of it, so two renewals may fail before it is lost.
 */

/** BullMQ's job lock (`lockDuration`); BullMQ renews it every half of it, for all of a worker's jobs in one call. */
export const DEFAULT_JOB_LOCK_MS = 3_000;
/** How often BullMQ looks for active jobs whose lock is gone (one worker per interval does the work). */
export const DEFAULT_STALLED_INTERVAL_MS = 1_500;

/** How often a holder renews a session lock of `lockTtlMs`. */
export function renewEveryMs(lockTtlMs: number): number {
  return Math.max(Math.floor(lockTtlMs / 3), 100);
}
