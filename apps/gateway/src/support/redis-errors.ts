/**
 * Redis connection errors, logged without flooding. ioredis emits an error on every failed reconnect (several a
 * second while Redis is away) and BullMQ forwards its connections' errors; an `error` event nobody listens to
 * would end the process (or, in BullMQ, land on the console). So every connection gets this listener: each
 * distinct error is logged once per outage, a reminder every five minutes while it lasts, and one line when the
 * connection is ready again (which starts a new outage count).
 */
import type { EventEmitter } from 'node:events';
import type { Logger } from './logger.js';

const REMIND_EVERY_MS = 5 * 60_000;
/** Distinct messages remembered per outage; past this, new ones are only counted. */
const MAX_DISTINCT = 20;

type Events = Pick<EventEmitter, 'on'>;

/**
 * `errors` emits the connection's `error` events; `readiness` its `ready` events (the same object for an
 * ioredis client; a BullMQ queue or worker forwards errors but not readiness, which its backend emits).
 */
export function logConnectionErrors(log: Logger, connection: string, errors: Events, readiness: Events = errors, now: () => number = Date.now): void {
  const logged = new Set<string>();
  let count = 0;
  let since = 0;
  let lastLine = 0;
  errors.on('error', (err: unknown) => {
    const text = err instanceof Error ? err.message : String(err);
    const at = now();
    if (count++ === 0) since = at;
    if (!logged.has(text) && logged.size < MAX_DISTINCT) {
      logged.add(text);
      lastLine = at;
      log.warn({ connection, err: text }, 'redis error');
    } else if (at - lastLine >= REMIND_EVERY_MS) {
      lastLine = at;
      log.warn({ connection, err: text, errors: count, sinceMs: at - since }, 'redis errors continue');
    }
  });
  readiness.on('ready', () => {
    if (count === 0) return;
    log.info({ connection, errors: count, downMs: now() - since }, 'redis connection ready again');
    logged.clear();
    count = 0;
  });
}
