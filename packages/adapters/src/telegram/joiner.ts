/**
 * Joins the parts of a text that a Telegram client split into several messages.
 *
 * Clients cut long texts at 4096 characters and send the parts back to back. A joinable message long enough to
 * be a first part (`minPartLength`) waits `windowMs`; another joinable one from the same user in the same
 * conversation within that window is appended (with a newline) and restarts the wait. Short texts that start
 * nothing are delivered at once. Anything else from that user (a command, a photo) first flushes what
 * is waiting, so arrival order is kept and commands are never delayed.
 */
import type { InboundMessage } from '../types.js';
import { PendingBatches, type Deliver } from './batches.js';

export class SplitJoiner {
  private readonly batches: PendingBatches;

  constructor(
    windowMs: number,
    private readonly deliver: Deliver,
    private readonly minPartLength = 0,
  ) {
    this.batches = new PendingBatches(windowMs, deliver);
  }

  /** Resolves once the message (alone or joined with later parts) has been delivered; rejects if delivery failed. */
  add(msg: InboundMessage, joinable: boolean): Promise<void> {
    const key = `${msg.conversationId}|${msg.userId}`;
    const waiting = this.batches.has(key);
    if (!joinable || (!waiting && msg.text.length < this.minPartLength)) {
      // Deliver even if the earlier part failed: they are independent messages.
      return this.batches.flush(key).catch(() => undefined).then(() => this.deliver(msg));
    }
    return this.batches.hold(key, msg, (held, next) => ({ ...held, text: `${held.text}\n${next.text}` }));
  }

  /** Delivers everything still waiting (used on stop); resolves when all of it has been handed over or failed. */
  flushAll(): Promise<void> {
    return this.batches.flushAll();
  }
}
