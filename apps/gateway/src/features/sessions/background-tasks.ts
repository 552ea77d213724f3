/**
 * Work a request starts but does not wait for — the memory flush behind /new's reply — tracked here so that
 * stopping the process waits for it (for a bounded time) instead of closing the store under it.
 */
import { InFlight } from '@herald/adapters';
import type { Logger } from '../../support/logger.js';

export class BackgroundTasks {
  private readonly inFlight = new InFlight();

  constructor(private readonly log?: Logger) {}

  /** Keeps `task` until it settles; a rejection (tasks should handle their own errors) is logged. */
  track(task: Promise<unknown>): void {
    void this.inFlight.track(task).catch((err: unknown) => this.log?.warn({ err }, 'background task failed'));
  }

  get running(): number {
    return this.inFlight.size;
  }

  /** On stop: waits up to `timeoutMs` for what is still running, and says so when it has to leave some behind. */
  async settle(timeoutMs: number): Promise<void> {
    if (this.inFlight.size === 0) return;
    this.log?.info({ tasks: this.inFlight.size }, 'waiting for background tasks before stopping');
    if (!(await this.inFlight.settled(timeoutMs))) {
      this.log?.warn({ tasks: this.inFlight.size, waitedMs: timeoutMs }, 'background tasks still running at shutdown; leaving them');
    }
  }
}
