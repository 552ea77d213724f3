/**
 * Liveness for mailboxes nobody is draining. Normally every mailbox entry has a BullMQ job, and whoever holds
 * the session drains it. An entry can still be left without one: ingress died between appending it and adding
 * its job, or a job ran out of attempts during a long Redis outage. The janitor finds non-empty mailboxes whose
 * session is not locked (Redis deletes empty lists, so it only ever scans pending work) and adds a wake-up job;
 * any job of a session drains its whole mailbox, so a spare one is harmless. One worker at a time sweeps.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import type { Mailbox } from './mailbox.js';
import type { TurnJobData } from './producer.js';

export const JANITOR_INTERVAL_MS = 30_000;
/** A mailbox whose head has waited at least this long without a lock is considered stranded. */
const STRANDED_AFTER_MS = 10_000;
const SCAN_COUNT = 500;

export interface JanitorOptions {
  redis: Redis;
  prefix: string;
  mailbox: Mailbox;
  queue: Queue<TurnJobData>;
  log: Logger;
  intervalMs?: number;
  strandedAfterMs?: number;
}

export class MailboxJanitor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly opts: JanitorOptions) {}

  start(): void {
    const every = this.opts.intervalMs ?? JANITOR_INTERVAL_MS;
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .then(() => undefined)
        .catch((err: unknown) => this.opts.log.warn({ err }, 'mailbox sweep failed'))
        .finally(() => (this.running = null));
    }, every);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Adds a wake-up job for every stranded mailbox; returns how many it woke. */
  async sweep(): Promise<number> {
    const { redis, prefix, mailbox, queue } = this.opts;
    const every = this.opts.intervalMs ?? JANITOR_INTERVAL_MS;
    // One sweeper at a time across all workers.
    if ((await redis.set(`${prefix}:janitor`, '1', 'PX', every, 'NX')) !== 'OK') return 0;
    const mboxPrefix = `${prefix}:mbox:`;
    // A short interval (tests, impatient operators) shortens the grace before a mailbox counts as stranded too.
    const strandedAfter = this.opts.strandedAfterMs ?? Math.min(STRANDED_AFTER_MS, Math.floor(every / 3));
    let woken = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${mboxPrefix}*`, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (const key of keys) {
        const sessionKey = key.slice(mboxPrefix.length);
        if (await mailbox.isBusy(sessionKey)) continue;
        const head = await mailbox.head(sessionKey);
        if (!head || Date.now() - head.entry.enqueuedAt < strandedAfter) continue;
        // Named after the head, so sweeps by several workers (or rounds) add one job, not many.
        await queue.add('turn', { sessionKey, entry: head.raw }, { jobId: `wake.${head.entry.id}.${head.entry.seq}` });
        woken++;
      }
    } while (cursor !== '0');
    if (woken > 0) this.opts.log.warn({ woken }, 'woke mailboxes that had no job');
    return woken;
  }
}
