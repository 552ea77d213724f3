/**
 * Writes that must land once their side effect has happened: "this reply was delivered" after the platform took
 * it. If the database is down at that moment, failing the turn would make the queue run it again and send the
 * reply a second time; instead the write waits for the database (with backoff, for a bounded time). untilStored
 * is the one retry owner of such a write; it is for writes after a side effect only (the table in
 * docs/architecture.md, "Retry owners"): any other store failure goes to the turn-level owner below.
 */
import { isTransientStoreError, type SessionStore } from '@herald/agent-core';
import pRetry from 'p-retry';
import type { Logger } from '../logger.js';
import type { TurnContext, TurnResult, TurnRunner } from '../queue/worker.js';

/** How long a delivered reply's record waits for the database before the turn gives up on it. */
export const STORE_PATIENCE_MS = 120_000;

export function untilStored<T>(write: () => Promise<T>, log: Logger, what: string, patienceMs = STORE_PATIENCE_MS): Promise<T> {
  return pRetry(write, {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: 250,
    maxTimeout: 5_000,
    maxRetryTime: patienceMs,
    shouldRetry: ({ error }) => isTransientStoreError(error),
    onFailedAttempt: ({ error, attemptNumber }) => {
      if (isTransientStoreError(error)) log.warn({ attempt: attemptNumber, err: error.message }, `store unavailable; retrying: ${what}`);
    },
  });
}

/**
 * The turn-level owner of a store failure (the store-outage policy, turns/pipeline.ts): a turn that failed because
 * the database went away waits (holding its session, which could not move anyway) until the database answers again
 * and then runs again, instead of falling back to the queue: after an outage every conversation resumes within a
 * second or two. The outbox makes the re-run safe. Past `patienceMs`, or once the turn is aborted, the error goes
 * on; the worker then puts the job's wake-up off (queue/worker.ts) rather than spending one of BullMQ's attempts.
 */
export async function rideOutStoreOutage(
  store: Pick<SessionStore, 'ping'>,
  ctx: TurnContext,
  run: () => Promise<TurnResult | void>,
  patienceMs = STORE_PATIENCE_MS,
): Promise<TurnResult | void> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    try {
      return await run();
    } catch (err) {
      if (!isTransientStoreError(err) || ctx.signal.aborted || Date.now() >= deadline) throw err;
      ctx.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'store unavailable; the turn runs again once it answers');
      await pRetry(() => store.ping(), {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: 250,
        maxTimeout: 2_000,
        maxRetryTime: Math.max(deadline - Date.now(), 0),
        signal: ctx.signal,
        // Waiting for the database is not a hung turn: keep the watchdog away.
        onFailedAttempt: () => ctx.touch(),
      });
    }
  }
}

/** `run` behind rideOutStoreOutage (the pipeline calls rideOutStoreOutage itself). */
export function retryThroughStoreOutage(run: TurnRunner, store: Pick<SessionStore, 'ping'>, patienceMs = STORE_PATIENCE_MS): TurnRunner {
  return (ctx) => rideOutStoreOutage(store, ctx, () => run(ctx), patienceMs);
}
