/**
 * Control signals between ingress and whichever worker holds a session: interrupt, stop, steer, withdraw.
 * One Redis pub/sub channel per deployment; every worker subscribes once and routes by session key.
 * Pub/sub is fire-and-forget, so it is only the fast path: the `intr:<key>` marker in Redis (see mailbox.ts) is
 * what guarantees a stale reply is never sent even if a signal is missed.
 */
import type { Redis } from 'ioredis';

export type ControlSignal =
  | { type: 'interrupt'; sessionKey: string; seq: number }
  /** `fence`: from Mailbox.stop; only turns holding a lower fencing token stop (absent: whatever runs). */
  | { type: 'stop'; sessionKey: string; fence?: number }
  | { type: 'steer'; sessionKey: string; entry: string }
  /** The sender took a withdrawable message back (Mailbox.withdraw): its turn, if running, stops like /stop. */
  | { type: 'withdraw'; sessionKey: string; entryId: string };

export class ControlBus {
  private readonly channel: string;
  private handlers = new Set<(s: ControlSignal) => void>();
  private subscribed = false;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis | null,
    prefix: string,
  ) {
    this.channel = `${prefix}:control`;
  }

  async publish(signal: ControlSignal): Promise<void> {
    await this.publisher.publish(this.channel, JSON.stringify(signal));
  }

  /** Starts listening (workers only). */
  async listen(handler: (s: ControlSignal) => void): Promise<void> {
    if (!this.subscriber) throw new Error('ControlBus was built without a subscriber connection');
    this.handlers.add(handler);
    if (this.subscribed) return;
    this.subscribed = true;
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      let signal: ControlSignal;
      try {
        signal = JSON.parse(message) as ControlSignal;
      } catch {
        return;
      }
      for (const h of this.handlers) h(signal);
    });
    await this.subscriber.subscribe(this.channel);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    // A subscriber that is not connected would queue the UNSUBSCRIBE until Redis returns: nothing to undo then.
    if (this.subscriber && this.subscribed && this.subscriber.status === 'ready') await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
  }
}
