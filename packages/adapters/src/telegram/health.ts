import type { AdapterHealth, AdapterState } from '../types.js';

/** The ingress's health as the admin server reports it. */
export class HealthTracker {
  private state: AdapterState = 'disconnected';
  private error: string | null = null;
  private lastEventAt: number | null = null;

  set(state: AdapterState, error: string | null = null): void {
    // fatal is final until the ingress is started again
    if (this.state === 'fatal' && state !== 'connecting') return;
    this.state = state;
    this.error = error;
  }

  get current(): AdapterState {
    return this.state;
  }

  event(): void {
    this.lastEventAt = Date.now();
  }

  snapshot(): AdapterHealth {
    return { state: this.state, lastEventAt: this.lastEventAt, error: this.error };
  }
}
