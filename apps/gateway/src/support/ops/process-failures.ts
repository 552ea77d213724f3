/**
 * The last line of defence: an error nothing caught. Each gets one log line with a message of its own, so an
 * operator (and the fuzz suite, test/fuzz) can find them.
 *
 * A rejected promise nobody awaited is logged and the process goes on: it is one lost piece of work, and a
 * library's stray rejection must not take every conversation of the process down with it. An uncaught exception
 * leaves the process in a state nobody knows, so it is logged and the process exits (Node's own rule); the
 * orchestrator restarts it and BullMQ hands its turns to another worker.
 */
import type { Logger } from '../logger.js';

export const UNHANDLED_REJECTION_LOG = 'unhandled promise rejection';
export const UNCAUGHT_EXCEPTION_LOG = 'uncaught exception; exiting';
/** Time for the fatal line to reach stdout before the process exits. */
const FLUSH_MS = 50;

export interface ProcessLike {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', listener: (err: Error) => void): unknown;
}

export function watchProcessFailures(log: Logger, proc: ProcessLike = process, exit: (code: number) => void = process.exit): void {
  proc.on('unhandledRejection', (reason) => {
    log.error({ err: reason }, UNHANDLED_REJECTION_LOG);
  });
  proc.on('uncaughtException', (err) => {
    log.fatal({ err }, UNCAUGHT_EXCEPTION_LOG);
    setTimeout(() => exit(1), FLUSH_MS);
  });
}
