/**
 * What an adapter needs to acknowledge a delivery only once its message was handed over, on a platform that
 * redelivers what it was not told had arrived (a Slack retry, a Telegram webhook resend):
 *
 * - HandOverMemory: per platform message (or event), the hand-over it started — running or done. A redelivery joins
 *   it instead of starting a second one, so its acknowledgement says what that hand-over says; one that failed is
 *   forgotten, so the next redelivery hands the message over again. Bounded, oldest forgotten first (the gateway's
 *   mailbox still drops a message it took, across processes and restarts).
 * - within: the platform's answer cannot wait for ever (Slack's 3 s); the hand-over goes on past it, and whoever
 *   asks again (the redelivery) gets its outcome.
 */
export class HandOverMemory<K = string> {
  // Maps iterate in insertion order, so the first key is always the oldest.
  private readonly entries = new Map<K, Promise<void>>();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`HandOverMemory capacity must be a positive integer, got ${capacity}`);
  }

  /** The hand-over already started for `key` (running or done), if any. */
  get(key: K): Promise<void> | undefined {
    return this.entries.get(key);
  }

  /** Records `handOver` as `key`'s and returns it; forgotten again if it fails. */
  remember(key: K, handOver: Promise<void>): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, handOver);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    handOver.catch(() => {
      if (this.entries.get(key) === handOver) this.entries.delete(key);
    });
    return handOver;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** `work`'s outcome if it settles within `ms`, else `late`; `work` goes on either way. */
export async function within<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), Math.max(ms, 0));
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
