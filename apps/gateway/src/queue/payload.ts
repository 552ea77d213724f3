import type { InboundMessage } from '@herald/adapters';
import type { TurnPayload } from './mailbox.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';

/** What a turn needs of an inbound message (plain JSON, stored in the mailbox). */
export function payloadFrom(msg: InboundMessage, profile?: string): TurnPayload {
  return {
    ...(profile !== undefined && profile !== DEFAULT_PROFILE ? { profile } : {}),
    ...(msg.account !== undefined ? { account: msg.account } : {}),
    ...(msg.spaceId !== undefined ? { spaceId: msg.spaceId } : {}),
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
