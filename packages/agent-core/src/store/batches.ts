/**
 * PostgreSQL: the same write of turns finishing together, made in one statement (the delivered marks, deliveries.ts;
 * the turns' records, record-batches.ts). An item is written at once when none is being written, and the items that
 * come meanwhile go together right after it. No timer, so a lone item waits for nothing; under load an item costs
 * less than one round trip.
 */

/** One item waiting for its statement, with how its caller hears the outcome. */
export interface Pending<T, R> {
  item: T;
  done: (result: R) => void;
  failed: (err: unknown) => void;
}

export interface BatchWriter<T, R> {
  /** Items in one statement, at most (a bound on its parameters' size). */
  max: number;
  /** Items with the same key never share a statement (one row each: a later one waits for the next). */
  keyOf(item: T): string;
  /** Writes the batch and settles each item; an error it throws fails every item it has not settled. */
  write(batch: ReadonlyArray<Pending<T, R>>): Promise<void>;
}

export class Batches<T, R> {
  private queued: Array<Pending<T, R>> = [];
  private writing = false;

  constructor(private readonly writer: BatchWriter<T, R>) {}

  add(item: T): Promise<R> {
    return new Promise((done, failed) => {
      this.queued.push({ item, done, failed });
      if (!this.writing) void this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    this.writing = true;
    while (this.queued.length > 0) {
      const batch = this.nextBatch();
      try {
        await this.writer.write(batch);
      } catch (err) {
        for (const p of batch) p.failed(err); // a promise already settled stays as it was
      }
    }
    this.writing = false;
  }

  /** The queued items of distinct keys, oldest first; the rest wait for the next statement. */
  private nextBatch(): Array<Pending<T, R>> {
    const batch: Array<Pending<T, R>> = [];
    const keys = new Set<string>();
    const rest: Array<Pending<T, R>> = [];
    for (const p of this.queued) {
      const key = this.writer.keyOf(p.item);
      if (batch.length < this.writer.max && !keys.has(key)) {
        keys.add(key);
        batch.push(p);
      } else rest.push(p);
    }
    this.queued = rest;
    return batch;
  }
}

/** PostgreSQL's text form of a text[]: every element quoted, its quotes and backslashes escaped. */
export function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}
