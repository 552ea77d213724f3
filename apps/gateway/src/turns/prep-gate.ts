/**
 * At most `limit` turns at once between their start and their first model request.
 *
 * Why: a burst of turns started together moves through the steps before the model call (the session lock, the
 * store's writes and reads, Redis checks) in lockstep, each step batched for all of them. So no model request went
 * out until nearly every turn was prepared, then thousands went out at once, and the worker sat idle until the
 * answers came. With a gate the first turns reach the model early, and their waits overlap the others' preparing.
 * Under an even load fewer turns than the limit prepare at a time, and nobody waits.
 */
export class PrepGate {
  private inside = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new Error(`the preparation limit must be at least 1 (got ${limit})`);
  }

  /** Turns preparing now, and turns waiting to. */
  get load(): { inside: number; waiting: number } {
    return { inside: this.inside, waiting: this.waiting.length };
  }

  /** Waits for a place (FIFO) unless `signal` aborts first; the release it gives is safe to call more than once. */
  async enter(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.inside < this.limit && this.waiting.length === 0) this.inside++;
    else await this.queue(signal);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The place passes straight to the next turn in line.
      if (next) next();
      else this.inside--;
    };
  }

  private queue(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const admit = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(admit);
        if (i !== -1) this.waiting.splice(i, 1);
        reject(signal.reason);
      };
      this.waiting.push(admit);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
