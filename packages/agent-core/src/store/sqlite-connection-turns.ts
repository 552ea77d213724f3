/**
 * Whose turn it is on the one SQLite connection: the transaction (or write group) that holds it, and the calls
 * waiting for it to end, woken in arrival order.
 */

/** A transaction's frame: the async context it runs in; calls in that context join it while it is active. */
export interface TxFrame {
  active: boolean;
}

/** A call waiting for the open transaction to end; `takes`: a transaction, which will hold the connection itself. */
interface Waiter {
  takes: boolean;
  wake: () => void;
}

export class ConnectionTurns {
  /** The transaction that has the connection, if any. */
  holder: TxFrame | null = null;
  /** In arrival order; a waiter woken too late (another call took the connection first) goes back to the front. */
  private readonly waiters: Waiter[] = [];

  /**
   * The callers loop `for (let waited = false; turns.holder; waited = true) await turns.wait(…)` inline on
   * purpose: the last check of `holder` and taking the connection must happen in one synchronous stretch — an async
   * helper around the loop would add a microtask in between, in which another call could take it.
   */
  wait(takes: boolean, again: boolean): Promise<void> {
    return new Promise((wake) => {
      if (again) this.waiters.unshift({ takes, wake });
      else this.waiters.push({ takes, wake });
    });
  }

  /**
   * Wakes the waiters up to and including the first transaction: the statements before it run, then it takes the
   * connection; the rest stay queued until it ends. (Waking all of them each time made every commit cost one
   * wake-up per waiting call: with thousands of turns in flight, most of a worker's time.)
   */
  release(): void {
    this.holder = null;
    while (this.waiters.length > 0) {
      const next = this.waiters.shift() as Waiter;
      next.wake();
      if (next.takes) break;
    }
  }
}
