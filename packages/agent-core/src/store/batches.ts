/**
 * PostgreSQL: the same write of turns starting or finishing together, made in one statement (the begins,
 * open-session-turn.ts; the records, record-batches.ts; the delivered marks, deliveries.ts). An item is written at
 * once, in a statement of its own, when none is being written, and the items that come meanwhile go together right
 * after it. No timer, so a lone item waits for nothing; under load an item costs less than one round trip. One
 * statement of a kind at a time: a second in flight halved the sharing (0.53 statements a message became 1.2 on the
 * queue bench, and messages/s fell by a seventh), though while one waits on a row lock every item of its kind waits.
 *
 * When the server refuses a statement of several (a row one of them may not write, a value it cannot take), each
 * item is written again in a statement of its own, so one that fails fails alone with its own error. A lost
 * connection fails them all with it: whether the statement landed is unknown, as for one item, and the callers' own
 * retries decide.
 */
import { StoreUnavailableError } from './errors.js';
import type { Sql } from './sql.js';

export interface BatchWriter<T, R> {
  /** Items in one statement, at most (a bound on the locks it holds until its transaction ends). */
  max: number;
  /** With sizeOf: the summed size of the items in one statement, at most (a bound on its parameters' size). */
  maxSize?: number;
  sizeOf?(item: T): number;
  /** Items with the same key never share a statement (one row each: a later one waits for the next). */
  keyOf(item: T): string;
  /** False for an item that cannot share a statement: it goes alone at once. Absent: every item can. */
  canShare?(item: T): boolean;
  /** One item in a statement of its own. */
  one(item: T): Promise<R>;
  /** Several items in one statement: each item's outcome, in their order. */
  together(items: readonly T[]): Promise<ReadonlyArray<PromiseSettledResult<R>>>;
}

interface Pending<T, R> {
  item: T;
  done: (result: R) => void;
  failed: (err: unknown) => void;
}

export class Batches<T, R> {
  private queued: Array<Pending<T, R>> = [];
  private writing = false;

  constructor(
    private readonly sql: Sql,
    private readonly writer: BatchWriter<T, R>,
  ) {}

  /** The item's outcome; inside a transaction, or when it cannot share, in a statement of its own at once. */
  add(item: T): Promise<R> {
    if (this.sql.inTransaction || this.writer.canShare?.(item) === false) return this.writer.one(item);
    return new Promise((done, failed) => {
      this.queued.push({ item, done, failed });
      if (!this.writing) void this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    this.writing = true;
    while (this.queued.length > 0) await this.write(this.nextBatch());
    this.writing = false;
  }

  private async write(batch: ReadonlyArray<Pending<T, R>>): Promise<void> {
    const alone = (p: Pending<T, R>): Promise<void> => this.writer.one(p.item).then(p.done, p.failed);
    if (batch.length === 1) return alone(batch[0]);
    let outcomes: ReadonlyArray<PromiseSettledResult<R>>;
    try {
      outcomes = await this.writer.together(batch.map((p) => p.item));
    } catch (err) {
      if (err instanceof StoreUnavailableError) for (const p of batch) p.failed(err);
      else await Promise.all(batch.map(alone));
      return;
    }
    for (const [i, p] of batch.entries()) {
      const o = outcomes[i] ?? { status: 'rejected', reason: new Error(`a shared statement gave ${outcomes.length} outcomes for ${batch.length} items`) };
      if (o.status === 'fulfilled') p.done(o.value);
      else p.failed(o.reason);
    }
  }

  /** The queued items of distinct keys, oldest first, within the bounds; the rest wait for the next statement. */
  private nextBatch(): Array<Pending<T, R>> {
    const { max, maxSize = Number.POSITIVE_INFINITY, sizeOf } = this.writer;
    const batch: Array<Pending<T, R>> = [];
    const keys = new Set<string>();
    const rest: Array<Pending<T, R>> = [];
    let size = 0;
    for (const p of this.queued) {
      const key = this.writer.keyOf(p.item);
      const itemSize = sizeOf?.(p.item) ?? 0;
      const fits = batch.length === 0 || (batch.length < max && size + itemSize <= maxSize);
      if (fits && !keys.has(key)) {
        keys.add(key);
        batch.push(p);
        size += itemSize;
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

/** An item's outcome for `together`: what `make` gives, or the error it throws (that item alone fails). */
export function settledOf<R>(make: () => R): PromiseSettledResult<R> {
  try {
    return { status: 'fulfilled', value: make() };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}
