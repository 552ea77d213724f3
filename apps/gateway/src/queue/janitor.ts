/**
 * Liveness for mailboxes nobody is draining. Normally every mailbox entry has a BullMQ job, and whoever holds
 * the session drains it. An entry can still be left without one: ingress died between appending it and adding
 * its job, or a job ran out of attempts during a long Redis outage. The janitor finds non-empty mailboxes whose
 * session is not locked (Redis deletes empty lists, so it only ever scans pending work) and adds a wake-up job;
 * any job of a session drains its whole mailbox, so a spare one is harmless. One worker at a time sweeps.
 *
 * An unlocked mailbox is not always jobless: a killed worker's session lock expires while its job still sits in
 * BullMQ's active list until the stalled check moves it back (queue/leases.ts). The head's job (or an earlier
 * wake-up of it) that is still active, waiting or delayed is left to BullMQ; only a head with no such job is woken.
 *
 * A wake-up job is retried like any turn job, and it is deduplicated for a while rather than by a fixed job id:
 * a wake-up that failed for good (and sits in the failed set) must not stop a later sweep from waking the
 * mailbox again. One mailbox that cannot be read (a corrupt head) is logged and skipped, not the whole sweep.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../support/logger.js';
import type { Mailbox } from './mailbox.js';
import { JOB_ATTEMPTS, JOB_BACKOFF, JOB_RETENTION, entryJobId, type TurnJobData } from './producer.js';

const JANITOR_INTERVAL_MS = 30_000;
/** A mailbox whose head has waited at least this long without a lock is considered stranded. */
const STRANDED_AFTER_MS = 10_000;
const SCAN_COUNT = 500;
/** Job states in which a job will still run (BullMQ recovers a stalled active job itself). */
const PENDING_STATES = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);
/**
 * How long one head's wake-up stays deduplicated: about as long as a wake-up job can spend retrying (JOB_ATTEMPTS
 * with JOB_BACKOFF: 1 + 2 + … + 64 s), so sweeps do not pile up wake-ups for a head whose job is still trying,
 * while one that failed for good is replaced soon after.
 */
const WAKE_DEDUP_TTL_MS = 150_000;

export interface JanitorOptions {
  redis: Redis;
  prefix: string;
  mailbox: Mailbox;
  queue: Queue<TurnJobData>;
  log: Logger;
  intervalMs?: number;
  strandedAfterMs?: number;
  /** How long a head's wake-up is deduplicated (default WAKE_DEDUP_TTL_MS, never below the interval). */
  wakeDedupTtlMs?: number;
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
    const { redis, prefix } = this.opts;
    const every = this.opts.intervalMs ?? JANITOR_INTERVAL_MS;
    // One sweeper at a time across all workers.
    if ((await redis.set(`${prefix}:janitor`, '1', 'PX', every, 'NX')) !== 'OK') return 0;
    const mboxPrefix = `${prefix}:mbox:`;
    let woken = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${mboxPrefix}*`, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (const key of keys) {
        const sessionKey = key.slice(mboxPrefix.length);
        try {
          if (await this.wakeIfStranded(sessionKey, every)) woken++;
        } catch (err) {
          this.opts.log.warn({ err, sessionKey }, 'mailbox could not be checked; skipped in this sweep');
        }
      }
    } while (cursor !== '0');
    if (woken > 0) this.opts.log.warn({ woken }, 'woke mailboxes that had no job');
    return woken;
  }

  private async wakeIfStranded(sessionKey: string, every: number): Promise<boolean> {
    const { mailbox, queue } = this.opts;
    if (await mailbox.isBusy(sessionKey)) return false;
    const head = await mailbox.head(sessionKey);
    // A short interval (tests, impatient operators) shortens the grace before a mailbox counts as stranded too.
    const strandedAfter = this.opts.strandedAfterMs ?? Math.min(STRANDED_AFTER_MS, Math.floor(every / 3));
    if (!head || Date.now() - head.entry.enqueuedAt < strandedAfter) return false;
    const { id, seq } = head.entry;
    if (await this.hasJob(id, seq)) return false;
    const ttl = Math.max(this.opts.wakeDedupTtlMs ?? WAKE_DEDUP_TTL_MS, every);
    // Named after the head, so sweeps by several workers (or rounds) add one job, not many.
    await queue.add(
      'turn',
      { sessionKey, entryId: id, seq },
      { deduplication: { id: wakeId(id, seq), ttl }, attempts: JOB_ATTEMPTS, backoff: JOB_BACKOFF, ...JOB_RETENTION },
    );
    return true;
  }

  /** Whether the head's own job, or a wake-up added for it, will still run: then the mailbox is not stranded. */
  private async hasJob(entryId: string, seq: number): Promise<boolean> {
    const { queue } = this.opts;
    const wake = await queue.getDeduplicationJobId(wakeId(entryId, seq));
    for (const jobId of [entryJobId(entryId, seq), wake]) {
      if (jobId && PENDING_STATES.has(await queue.getJobState(jobId))) return true;
    }
    return false;
  }
}

/** The deduplication id of a head's wake-up job: sweeps by several workers (or rounds) add one job, not many. */
function wakeId(entryId: string, seq: number): string {
  return `wake.${entryId}.${seq}`;
}
