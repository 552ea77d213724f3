/**
 * Work in arrival order per key, different keys in parallel: the next task of a key starts when the previous
 * one has settled (fulfilled or rejected), whatever it took. The gateway hands messages to its router through
 * one of these (keyed by conversation), and adapters whose own preparation awaits (a thread lookup) order that
 * preparation with one, so a slow first message is never overtaken by the second.
 *
 * `run` appends synchronously: the order of `run` calls is the order of the tasks.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every task queued before it under `key`; resolves or rejects with its outcome. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    // A tail never rejects (see below), so the task runs whatever happened to the one before it.
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(() => task());
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with queued or running tasks. */
  get size(): number {
    return this.tails.size;
  }

  /** Resolves once every task queued so far has settled. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }
}
