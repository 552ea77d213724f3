/**
 * A process is a list of parts (roles/ingress.ts, roles/worker.ts, roles/all.ts). compose() opens them in list
 * order, then starts them in list order, and stops them in reverse: by stop(), or at once when a later step fails
 * (or the process is told to stop while starting), so nothing is left connected behind a failed start.
 */
import type { Logger } from '../support/logger.js';
import type { ReadinessCheck } from '../edges/admin/health.js';
import { abortable, settledWithin } from '../support/settle.js';

/** After the drain timeout, how long closing connections may take before stop() gives up on them. */
export const CLOSE_GRACE_MS = 2_000;

export interface Part {
  /** What its stop is called in the shutdown's log lines ('close failed', 'did not wait for …'). */
  readonly name: string;
  /** Connects and builds what the part holds; its stop is called from here on, even when opening fails. */
  open?(): Promise<void> | void;
  /** Begins its work, once every part is open. */
  start?(): Promise<void> | void;
  stop?(): Promise<unknown>;
  /** Stopping it needs Redis: when Redis is unreachable at that point, the shutdown does not wait for it. */
  readonly needsRedis?: boolean;
  /** What /health/ready asks of it (roles/base-parts.ts builds the admin server from every part's). */
  readonly ready?: ReadinessCheck;
}

/** What every part of a process is built with. */
export interface StartContext {
  readonly log: Logger;
  /** Steps that wait for Redis to answer end at once on a stop: Redis may be gone, and they would wait for it. */
  untilStopped<T>(step: Promise<T>): Promise<T>;
}

export interface Composed {
  /** Stops every part, in reverse; waits for none of them past `deadline` (ms since the epoch). */
  stop(deadline: number): Promise<void>;
}

/** A value a part holds once it is open: read before that, it says which part was not open. */
export function opened<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not open yet`);
  return value;
}

export function startContext(log: Logger, signal: AbortSignal | undefined): StartContext {
  return { log, untilStopped: (step) => (signal ? abortable(step, signal) : step) };
}

/**
 * Opens then starts `parts`; a stop asked for during start-up (`signal`) ends it between steps (the step in
 * progress finishes first). `redisReady` tells the shutdown whether Redis is reachable.
 */
export async function compose(parts: readonly Part[], log: Logger, signal: AbortSignal | undefined, redisReady: () => boolean): Promise<Composed> {
  const stoppable: Part[] = [];
  const stopAll = (deadline?: number): Promise<void> => stopInReverse(stoppable.splice(0).reverse(), log, redisReady, deadline);
  try {
    for (const part of parts) {
      signal?.throwIfAborted();
      if (part.stop) stoppable.push(part);
      await part.open?.();
    }
    for (const part of parts) {
      if (!part.start) continue;
      signal?.throwIfAborted();
      await part.start();
    }
  } catch (err) {
    // Told to stop while starting: the same deadline as a stop, since what is pending may be waiting on a dead Redis.
    await stopAll(signal?.aborted ? Date.now() + CLOSE_GRACE_MS : undefined);
    throw err;
  }
  return { stop: (deadline) => stopAll(deadline) };
}

async function stopInReverse(parts: readonly Part[], log: Logger, redisReady: () => boolean, deadline?: number): Promise<void> {
  const abandoned: string[] = [];
  for (const part of parts) {
    const what = part.name;
    const closing = (part.stop ? part.stop() : Promise.resolve()).catch((err: unknown) => log.warn({ err, what }, 'close failed'));
    if (deadline === undefined) {
      await closing;
      continue;
    }
    // A stop has a deadline: Redis being gone, or a part hanging, must not keep the process from exiting.
    const waitMs = part.needsRedis === true && !redisReady() ? 0 : Math.max(deadline - Date.now(), 0);
    if (!(await settledWithin(closing, waitMs))) abandoned.push(what);
  }
  if (abandoned.length > 0) {
    const why = redisReady() ? 'the shutdown deadline passed' : 'Redis is unreachable';
    log.warn({ abandoned }, `shutdown: did not wait for ${abandoned.join(', ')} (${why})`);
  }
}
