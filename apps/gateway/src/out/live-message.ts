/**
 * The pieces a turn's live display is made of: one outlet per chat (sends and edits in order, spaced out to stay
 * under the platform's limits, and backing off for as long as a rate limit says), and a message that is sent once
 * and then edited in place.
 */
import { RateLimitedError, type PlatformEgress } from '@herald/adapters';
import type { Logger } from '../support/logger.js';

/** When each chat may be edited next, shared by every turn of this process. */
const nextEditAt = new Map<string, number>();

/** Sends and edits of one turn, one at a time, in order; failures are logged, never thrown into the turn. */
export class ChatOutlet {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly egress: PlatformEgress,
    readonly conversationId: string,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  run(what: string, fn: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(fn).catch((err: unknown) => {
      // Rate-limit aware: the platform said when to come back; the next edit of this chat waits that long.
      if (err instanceof RateLimitedError) this.backOff(err.retryAfterMs);
      this.log.warn({ err }, `${what} failed`);
    });
    return this.chain;
  }

  private backOff(ms: number): void {
    nextEditAt.set(this.conversationId, Math.max(nextEditAt.get(this.conversationId) ?? 0, Date.now() + ms));
  }

  /** Resolves once everything queued so far is done. */
  idle(): Promise<void> {
    return this.chain;
  }

  delayUntilEdit(): number {
    return Math.max(0, (nextEditAt.get(this.conversationId) ?? 0) - Date.now());
  }

  spend(): void {
    nextEditAt.set(this.conversationId, Date.now() + this.intervalMs);
    // Keep the map small: forget chats whose slot is long past.
    if (nextEditAt.size > 10_000) for (const [k, t] of nextEditAt) if (t < Date.now()) nextEditAt.delete(k);
  }
}

/** One message that is sent once and then edited, at most once per the chat's interval, to what `render` says. */
export class LiveMessage {
  id: string | null = null;
  private shown: string | null = null;
  private creating = false;
  /** After finish/close: no more scheduled edits (a late one would overwrite the final text). */
  private frozen = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: ChatOutlet,
    private render: () => string,
    private readonly what: string,
    private readonly mayStart: () => Promise<boolean>,
    private readonly replyTo?: string,
    /** Told the message's id once it exists (the streamed reply's id is recorded in the outbox). */
    private readonly onCreated?: (id: string) => Promise<void>,
  ) {}

  touch(): void {
    if (this.frozen) return;
    if (this.id === null) {
      if (this.creating) return; // create() looks again when it is done
      this.creating = true;
      void this.out.run(`sending the ${this.what}`, () => this.create());
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.out.run(`editing the ${this.what}`, () => this.flush());
    }, this.out.delayUntilEdit());
  }

  /** Shows `text` for good: one last edit (or the first send, if it is still on its way), then no more. */
  settle(text: string): boolean {
    this.render = () => text;
    this.flushNow();
    return true;
  }

  /** Queues one last edit with whatever changed, then stops (the caller waits for the outlet). */
  flushNow(): void {
    this.freeze();
    void this.out.run(`editing the ${this.what}`, () => this.flush());
  }

  freeze(): void {
    this.frozen = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async create(): Promise<void> {
    try {
      const text = this.render();
      if (text.trim() === '' || !(await this.mayStart())) return;
      this.out.spend();
      const sent = await this.out.egress.send(this.out.conversationId, text, { replyTo: this.replyTo });
      this.id = sent.messageIds[0] ?? null;
      this.shown = text;
      if (this.id !== null) await this.onCreated?.(this.id);
    } finally {
      this.creating = false;
    }
    if (this.id !== null && this.render() !== this.shown) this.touch();
  }

  private async flush(): Promise<void> {
    const text = this.render();
    if (this.id === null || text === this.shown || text.trim() === '') return;
    this.out.spend();
    await this.out.egress.edit(this.out.conversationId, this.id, text);
    this.shown = text;
  }
}
