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

type Deliver = (msg: InboundMessage) => Promise<void>;

interface Pending {
  message: InboundMessage;
  timer: NodeJS.Timeout;
  /** Settles when the joined message has been delivered; every part's caller waits on it. */
  done: Promise<void>;
  release: () => void;
}

export class SplitJoiner {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly windowMs: number,
    private readonly deliver: Deliver,
    private readonly minPartLength = 0,
  ) {}

  /** Resolves once the message (alone or joined with later parts) has been delivered; rejects if delivery failed. */
  add(msg: InboundMessage, joinable: boolean): Promise<void> {
    const key = `${msg.conversationId}|${msg.userId}`;
    const waiting = this.pending.get(key);
    if (!joinable || (!waiting && msg.text.length < this.minPartLength)) {
      const before = waiting ? this.flush(key) : Promise.resolve();
      // Deliver even if the earlier part failed: they are independent messages.
      return before.catch(() => undefined).then(() => this.deliver(msg));
    }
    if (waiting) {
      waiting.message = { ...waiting.message, text: `${waiting.message.text}\n${msg.text}` };
      waiting.timer.refresh();
      return waiting.done;
    }
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const entry: Pending = {
      message: msg,
      timer: setTimeout(() => void this.flush(key).catch(() => undefined), this.windowMs),
      done: gate.then(() => this.deliver(entry.message)),
      release,
    };
    this.pending.set(key, entry);
    return entry.done;
  }

  /** Delivers everything still waiting (used on stop); resolves when all of it has been handed over or failed. */
  async flushAll(): Promise<void> {
    await Promise.allSettled([...this.pending.keys()].map((key) => this.flush(key)));
  }

  private flush(key: string): Promise<void> {
    const entry = this.pending.get(key);
    if (!entry) return Promise.resolve();
    this.pending.delete(key);
    clearTimeout(entry.timer);
    entry.release();
    return entry.done;
  }
}
