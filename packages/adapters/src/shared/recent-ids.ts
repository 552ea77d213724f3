/**
 * A bounded set of recently seen ids, oldest evicted first: what every adapter uses to drop an event the
 * platform delivers again (Telegram re-polls and webhook retries, Discord RESUME replays, Slack retries) without
 * growing forever. Cross-process dedupe belongs to the gateway (its mailbox remembers platform message ids).
 */
export class RecentIds<T = string> {
  // Maps iterate in insertion order, so the first key is always the oldest.
  private readonly ids = new Map<T, true>();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`RecentIds capacity must be a positive integer, got ${capacity}`);
    }
  }

  /** Records the id; false when it was already there (a duplicate). Seeing an id again makes it the newest. */
  add(id: T): boolean {
    const fresh = !this.ids.delete(id);
    this.ids.set(id, true);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.keys().next();
      if (!oldest.done) this.ids.delete(oldest.value);
    }
    return fresh;
  }

  has(id: T): boolean {
    return this.ids.has(id);
  }

  /** Forgets an id, so a later redelivery is taken (handing the message over failed). */
  delete(id: T): void {
    this.ids.delete(id);
  }

  get size(): number {
    return this.ids.size;
  }
}
