/**
 * A bounded set of recently seen ids (insertion-ordered Map, oldest evicted first). Used to drop gateway events
 * that Discord replays after a RESUME. Nothing Discord-specific: other adapters can reuse it for webhook retries.
 */
export class RecentIds {
  private readonly ids = new Map<string, true>();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`RecentIds capacity must be a positive integer, got ${capacity}`);
    }
  }

  /** Records the id; false when it was already there (a duplicate). Seeing an id again refreshes it. */
  add(id: string): boolean {
    const fresh = !this.ids.has(id);
    this.ids.delete(id);
    this.ids.set(id, true);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.keys().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    return fresh;
  }

  /** Forgets an id, so a later redelivery is taken (used when handing the message over failed). */
  delete(id: string): void {
    this.ids.delete(id);
  }

  get size(): number {
    return this.ids.size;
  }
}
