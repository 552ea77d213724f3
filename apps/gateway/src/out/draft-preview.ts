/**
 * Streaming through a platform draft (Telegram's sendMessageDraft in private chats): the text so far shows as an
 * animated draft that is not a message, so the final answer is sent once, as an ordinary message, with nothing to
 * edit or delete. Where the draft is refused (an older Bot API server answers 404, a chat that takes none), the
 * preview falls back to a message edited in place for the rest of the turn, and the process stops trying drafts
 * after a 404.
 */
import { NotFoundError, type PlatformEgress } from '@herald/adapters';
import type { Logger } from '../support/logger.js';
import type { ChatOutlet, LiveMessage } from './live-message.js';

/** Set once the platform said it has no draft method: later turns of this process edit in place straight away. */
let draftsUnavailable = false;

export function canDraft(egress: PlatformEgress, platform: string, chatType: string): boolean {
  return !draftsUnavailable && egress.draft !== undefined && platform === 'telegram' && chatType === 'dm';
}

/** A draft id per turn: non-zero, fits Telegram's 32-bit integer. */
function newDraftId(): number {
  return 1 + Math.floor(Math.random() * 0x7ffffffe);
}

/** Same surface as LiveMessage: `touch` as text arrives, `freeze`/`flushNow` at the end, `id` of a real message. */
export class DraftPreview {
  private readonly draftId = newDraftId();
  private shown: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private frozen = false;
  /** After a refused draft: the message edited in place instead. */
  private fallback: LiveMessage | null = null;

  constructor(
    private readonly out: ChatOutlet,
    private readonly render: () => string,
    private readonly makeFallback: () => LiveMessage,
    /** Checked before the first draft: a superseded turn shows nothing. */
    private readonly mayStart: () => Promise<boolean>,
    private readonly log: Logger,
  ) {}

  /** The streamed message, once the fallback created one; a draft is not a message. */
  get id(): string | null {
    return this.fallback?.id ?? null;
  }

  set id(value: string | null) {
    // A re-run that streamed into a message before keeps writing there.
    if (value === null) return;
    this.fallback ??= this.makeFallback();
    this.fallback.id = value;
  }

  touch(): void {
    if (this.frozen) return;
    if (this.fallback) return this.fallback.touch();
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.out.run('updating the draft', () => this.flush());
    }, this.out.delayUntilEdit());
  }

  /**
   * Ends the preview with `text`: as the fallback message's last edit, true; a draft is not a message, so without
   * one it just stops, false, and the caller sends `text` as a message.
   */
  settle(text: string): boolean {
    this.freeze();
    return this.fallback?.settle(text) ?? false;
  }

  flushNow(): void {
    this.freeze();
    this.fallback?.flushNow();
  }

  freeze(): void {
    this.frozen = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.fallback?.freeze();
  }

  private async flush(): Promise<void> {
    const text = this.render();
    if (this.frozen || this.fallback || text === this.shown || text.trim() === '') return;
    if (this.shown === null && !(await this.mayStart())) return;
    this.out.spend();
    try {
      await this.out.egress.draft?.(this.out.conversationId, this.draftId, text);
      this.shown = text;
    } catch (err) {
      if (err instanceof NotFoundError) draftsUnavailable = true;
      this.log.info({ err: err instanceof Error ? err.message : String(err) }, 'draft preview refused; editing a message in place instead');
      this.fallback = this.makeFallback();
      this.fallback.touch();
    }
  }
}
