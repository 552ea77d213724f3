/**
 * Messages held back for a short window so that later parts can join them (split long texts),
 * keyed by what they join on. Every part's caller waits for the joined message's delivery.
 */
import type { InboundMessage } from '../types.js';

export type Deliver = (msg: InboundMessage) => Promise<void>;

interface Pending {
  message: InboundMessage;
  timer: NodeJS.Timeout;
  /** Settles when the joined message has been delivered; every part's caller waits on it. */
  done: Promise<void>;
  release: () => void;
}

export class PendingBatches {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly windowMs: number,
    private readonly deliver: Deliver,
  ) {}

  has(key: string): boolean {
    return this.pending.has(key);
  }

  /**
   * Holds `msg` under `key`, or joins it into the message already held there with `merge` (the wait restarts).
   * Resolves once the joined message has been delivered; rejects if delivery failed.
   */
  hold(key: string, msg: InboundMessage, merge: (held: InboundMessage, next: InboundMessage) => InboundMessage): Promise<void> {
    const waiting = this.pending.get(key);
    if (waiting) {
      waiting.message = merge(waiting.message, msg);
      waiting.timer.refresh();
      return waiting.done;
    }
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const entry: Pending = {
      message: msg,
      timer: setTimeout(() => void this.flush(key).catch(() => undefined), this.windowMs),
      done: gate.then(() => this.deliver(entry.message)),
      release,
    };
    this.pending.set(key, entry);
    return entry.done;
  }

  /** Delivers what is held under `key` now; resolves when it has been handed over (or at once if nothing is held). */
  flush(key: string): Promise<void> {
    const entry = this.pending.get(key);
    if (!entry) return Promise.resolve();
    this.pending.delete(key);
    clearTimeout(entry.timer);
    entry.release();
    return entry.done;
  }

  /** Delivers everything still held (used on stop); resolves when all of it has been handed over or failed. */
  async flushAll(): Promise<void> {
    await Promise.allSettled([...this.pending.keys()].map((key) => this.flush(key)));
  }
}
