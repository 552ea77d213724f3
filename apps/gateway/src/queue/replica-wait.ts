/**
 * A mailbox append that must reach the primary's replicas before the message is acknowledged to its platform
 * (HERALD_REDIS_WAIT_REPLICAS): the append is followed by Redis' WAIT, so a primary that dies right after it — and
 * a replica promoted in its place — cannot lose a message the platform was told had arrived.
 *
 * WAIT only covers the writes of its own connection, so appends get a connection of their own (also so a WAIT held
 * up by a lagging replica never delays the lock renewals on the shared one). Two ways a WAIT can confirm what it
 * never saw are closed here:
 * - the connection was replaced between the append and the WAIT's answer (ioredis resends unanswered commands on
 *   a new connection, and a WAIT there covers nothing): any close in between makes the outcome unknown;
 * - an append that wrote nothing (the message was already in the mailbox, from an attempt whose WAIT timed out):
 *   a small write of our own is made first. Replication is one ordered stream, so once a replica has that write it
 *   has everything the primary held before it, the earlier append included.
 */
import type { Redis } from 'ioredis';

export type WaitOutcome = 'confirmed' | 'timeout' | 'reconnected';

export class ReplicationPendingError extends Error {
  override name = 'ReplicationPendingError';
  /** True when this attempt appended the message (a retry of it finds a duplicate); set by the producer. */
  appended = false;
}

export interface ReplicaWaitOptions {
  replicas: number;
  timeoutMs: number;
  /** The key the "wrote nothing" case writes (one per prefix, overwritten each time). */
  markKey: string;
  /** Each WAIT's outcome (the metric herald_redis_replica_waits_total). */
  onOutcome: (outcome: WaitOutcome) => void;
}

export class ReplicaWait {
  #closes = 0;

  constructor(
    /** The appends' own connection. */
    readonly redis: Redis,
    private readonly opts: ReplicaWaitOptions,
  ) {
    redis.on('close', () => this.#closes++);
  }

  /**
   * Runs `append` (on `this.redis`), then WAITs. `wrote`: whether the append changed anything. Resolves with the
   * append's result and whether enough replicas confirmed it in time; never throws for a WAIT that fell short, so
   * the caller can finish what belongs to the append (its job) before refusing the acknowledgement.
   */
  async after<T>(append: () => Promise<T>, wrote: (result: T) => boolean): Promise<{ result: T; outcome: WaitOutcome }> {
    const closes = this.#closes;
    const result = await append();
    if (!wrote(result)) await this.redis.set(this.opts.markKey, String(Date.now()));
    const acked = await this.redis.wait(this.opts.replicas, this.opts.timeoutMs);
    const outcome: WaitOutcome = this.#closes !== closes ? 'reconnected' : acked < this.opts.replicas ? 'timeout' : 'confirmed';
    this.opts.onOutcome(outcome);
    return { result, outcome };
  }

  /** The error a hand-over gets when the outcome was not `confirmed`: it is retried, the platform not yet told. */
  refusal(outcome: Exclude<WaitOutcome, 'confirmed'>): ReplicationPendingError {
    const { replicas, timeoutMs } = this.opts;
    return new ReplicationPendingError(
      outcome === 'timeout'
        ? `fewer than ${replicas} Redis replica${replicas === 1 ? '' : 's'} confirmed the message within ${timeoutMs} ms (HERALD_REDIS_WAIT_REPLICAS)`
        : 'the connection to Redis changed while the message was being stored: whether a replica has it is unknown',
    );
  }
}
