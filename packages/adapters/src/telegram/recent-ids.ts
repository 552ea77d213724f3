/**
 * A bounded set that forgets its oldest entries: enough to drop an update seen twice in a row (webhook retry,
 * re-polled unconfirmed update) without growing forever. Cross-process dedupe belongs to the gateway.
 */
export class RecentIds<T> {
  private readonly seen = new Set<T>();

  constructor(private readonly capacity: number) {
    if (capacity < 1) throw new RangeError('RecentIds capacity must be at least 1');
  }

  /** Records `id`; false when it was already there. */
  add(id: T): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    if (this.seen.size > this.capacity) {
      // Sets iterate in insertion order, so the first key is the oldest.
      const oldest = this.seen.values().next().value as T;
      this.seen.delete(oldest);
    }
    return true;
  }

  /** Lets `id` through again (its first delivery failed and Telegram will resend it). */
  forget(id: T): void {
    this.seen.delete(id);
  }

  has(id: T): boolean {
    return this.seen.has(id);
  }
}
