/**
 * Work started but not awaited by whoever started it (a hand-over an adapter does not wait for, a memory flush
 * behind a command's reply), kept so a stop can wait for it instead of leaving it to die with the process.
 */
export class InFlight {
  private readonly pending = new Set<Promise<void>>();

  /** Remembers `work` until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
    return work;
  }

  get size(): number {
    return this.pending.size;
  }

  /**
   * Resolves once everything tracked so far (and anything tracked meanwhile) has settled, or when `timeoutMs`
   * has passed; true when nothing was left running.
   */
  async settled(timeoutMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      if (Number.isFinite(timeoutMs)) timer = setTimeout(() => resolve('expired'), timeoutMs);
    });
    try {
      while (this.pending.size > 0) {
        if ((await Promise.race([Promise.all([...this.pending]), expired])) === 'expired') return false;
      }
      return true;
    } finally {
      clearTimeout(timer);
    }
  }
}
