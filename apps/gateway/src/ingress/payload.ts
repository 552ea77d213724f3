import type { InboundMessage } from '@herald/adapters';
import type { TurnPayload } from '../queue/mailbox.js';

/** What a turn needs of an inbound message (plain JSON, stored in the mailbox). */
export function payloadFrom(msg: InboundMessage): TurnPayload {
  return {
    text: msg.text,
    platform: msg.platform,
    conversationId: msg.conversationId,
    chatType: msg.chatType,
    chatId: msg.chatId,
    threadId: msg.threadId,
    userId: msg.userId,
    userName: msg.userName,
    messageId: msg.messageId,
    platformMessageId: msg.platformMessageId,
    quoted: msg.quoted,
    attachments: msg.attachments.length ? msg.attachments : undefined,
    ...(msg.partOf !== undefined && { partOf: msg.partOf }),
  };
}
