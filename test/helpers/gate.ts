/**
 * A gate the scripted model waits at ("hold …" messages), so a test can send more while a turn runs: `wait()` is
 * what the model's answer waits for, `release()` lets every waiting answer go, `reset()` closes a fresh gate (after
 * each test, so a test that failed before releasing cannot hold up the next).
 */
export class Gate {
  private opened: () => void = () => undefined;
  private closed = this.fresh();

  private fresh(): Promise<void> {
    return new Promise<void>((resolve) => (this.opened = resolve));
  }

  wait(): Promise<void> {
    return this.closed;
  }

  release(): void {
    this.opened();
  }

  reset(): void {
    this.opened();
    this.closed = this.fresh();
  }
}
