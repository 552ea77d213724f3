import { isTransientStoreError, type SessionStore } from '@herald/agent-core';
import pRetry from 'p-retry';
import type { TurnContext, TurnResult, TurnRunner } from '../queue/worker.js';
import { STORE_PATIENCE_MS } from '../out/until-stored.js';

/**
 * The turn-level owner of a store failure (the store-outage policy, turn/pipeline.ts): a turn that failed because
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
