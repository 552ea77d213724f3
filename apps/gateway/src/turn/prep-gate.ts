/**
 * At most `limit` turns at once between their start and their first model request.
 *
 * Why: a burst of turns started together moves through the steps before the model call (the session lock, the
 * store's writes and reads, Redis checks) in lockstep, each step batched for all of them. So no model request went
 * out until nearly every turn was prepared, then thousands went out at once, and the worker sat idle until the
 * answers came. With a gate the first turns reach the model early, and their waits overlap the others' preparing.
 * Under an even load fewer turns than the limit prepare at a time, and nobody waits.
 */

/** While turns wait in line, each hears `onWait` this often: waiting for a place is not a stalled turn. */
export const PREP_WAIT_TICK_MS = 1_000;

interface Waiter {
  admit: () => void;
  onWait?: () => void;
}

export class PrepGate {
  private inside = 0;
  private readonly waiting: Waiter[] = [];
  private ticker: NodeJS.Timeout | null = null;

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new Error(`the preparation limit must be at least 1 (got ${limit})`);
  }

  /** Turns preparing now, and turns waiting to. */
  get load(): { inside: number; waiting: number } {
    return { inside: this.inside, waiting: this.waiting.length };
  }

  /**
   * Waits for a place (FIFO) unless `signal` aborts first; `onWait` is called every PREP_WAIT_TICK_MS meanwhile (so
   * the turn's inactivity watchdog sees it alive). The release it gives is safe to call more than once.
   */
  async enter(signal: AbortSignal, onWait?: () => void): Promise<() => void> {
    signal.throwIfAborted();
    if (this.inside < this.limit && this.waiting.length === 0) this.inside++;
    else await this.queue(signal, onWait);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The place passes straight to the next turn in line.
      if (next) next.admit();
      else this.inside--;
      this.tickWhileWaiting();
    };
  }

  private queue(signal: AbortSignal, onWait: (() => void) | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        onWait,
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(waiter);
        if (i !== -1) this.waiting.splice(i, 1);
        this.tickWhileWaiting();
        reject(signal.reason);
      };
      this.waiting.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      this.tickWhileWaiting();
    });
  }

  /** One timer for the whole line, running only while someone waits. */
  private tickWhileWaiting(): void {
    if (this.waiting.length === 0) {
      if (this.ticker) clearInterval(this.ticker);
      this.ticker = null;
    } else if (!this.ticker) {
      this.ticker = setInterval(() => {
        for (const w of this.waiting) w.onWait?.();
      }, PREP_WAIT_TICK_MS);
      this.ticker.unref();
    }
  }
}
