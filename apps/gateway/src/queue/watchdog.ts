/**
 * The inactivity watchdog of a running turn: no agent activity for `idleMs` aborts it; a turn that still does not
 * end within `graceMs` (a tool ignoring its AbortSignal) is abandoned so the session moves on.
 */
import type { Logger } from '../support/logger.js';
import { TurnAbort } from './turn-abort.js';
import type { TurnResult } from './turn-context.js';

export const DEFAULT_WATCHDOG_MS = 1_800_000;
/** After the watchdog aborts a turn, how long it may take to wind down before the worker stops waiting for it. */
export const WATCHDOG_GRACE_MS = 5_000;

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
