/**
 * Writes that must land once their side effect has happened: "this reply was delivered" after the platform took
 * it. If the database is down at that moment, failing the turn would make the queue run it again and send the
 * reply a second time; instead the write waits for the database (with backoff, for a bounded time). untilStored
 * is the one retry owner of such a write; it is for writes after a side effect only (the table in
 * docs/architecture.md, "Retry owners"): any other store failure goes to the turn-level owner (turn/pipeline.ts rideOutStoreOutage).
 */
import { isTransientStoreError } from '@herald/agent-core';
import pRetry from 'p-retry';
import type { Logger } from '../support/logger.js';

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
