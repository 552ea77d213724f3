/**
 * Joins the messages of a Telegram album into one InboundMessage.
 *
 * Telegram sends each photo (video, document) of an album as its own message carrying the same media_group_id,
 * back to back; the caption usually rides on the first. The parts wait `windowMs` after the latest one and then
 * go on as one message (the first part's ids, every part's attachments, the captions joined), so an album is one
 * turn with all its pictures.
 */
import type { InboundMessage } from '../types.js';
import { PendingBatches, type Deliver } from './batches.js';

export class AlbumJoiner {
  private readonly batches: PendingBatches;

  constructor(windowMs: number, deliver: Deliver) {
    this.batches = new PendingBatches(windowMs, deliver);
  }

  /** Whether parts of this album are waiting (a later part in a group need not mention the bot again). */
  holds(conversationId: string, mediaGroupId: string): boolean {
    return this.batches.has(`${conversationId}|${mediaGroupId}`);
  }

  /** Resolves once the whole album has been delivered; rejects if delivery failed. */
  add(msg: InboundMessage, mediaGroupId: string): Promise<void> {
    return this.batches.hold(`${msg.conversationId}|${mediaGroupId}`, msg, (held, next) => ({
      ...held,
      text: [held.text, next.text].filter((t) => t !== '').join('\n'),
      attachments: [...held.attachments, ...next.attachments],
      quoted: held.quoted ?? next.quoted,
    }));
  }

  /** A message outside the album arrived in the conversation: the albums waiting there go first, keeping order. */
  flushConversation(conversationId: string): Promise<void> {
    return this.batches.flushPrefix(`${conversationId}|`);
  }

  flushAll(): Promise<void> {
    return this.batches.flushAll();
  }
}
