/**
 * A bounded "seen" set: remembers the most recent `capacity` keys, forgets the oldest first.
 * Generic; other adapters may use it for their own event dedupe.
 */
export class SeenSet {
  private readonly keys = new Map<string, true>();

  constructor(private readonly capacity: number) {
    if (capacity < 1) throw new RangeError('SeenSet capacity must be at least 1');
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Records `key`; false when it was already there (a duplicate). */
  add(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.set(key, true);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.keys().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
    return true;
  }

  delete(key: string): void {
    this.keys.delete(key);
  }

  get size(): number {
    return this.keys.size;
  }
}
