/**
 * Conversation ids: `telegram:<chat_id>[:<topic_id>]`.
 *
 * Telegram chat ids are integers (negative for groups, -100… for supergroups and channels) and forum topic ids
 * are positive integers, so neither can contain a colon; anything else is rejected rather than guessed at.
 */
import type { ConversationCodec } from '../types.js';

export interface TelegramConversation {
  chatId: string;
  /** Forum topic id; `'1'` is the General topic. */
  threadId?: string;
}

const PREFIX = 'telegram';
const CHAT_ID_RE = /^-?[1-9]\d{0,19}$/;
const TOPIC_ID_RE = /^[1-9]\d{0,19}$/;

export const telegramCodec: ConversationCodec<TelegramConversation> = {
  encode({ chatId, threadId }) {
    if (!CHAT_ID_RE.test(chatId)) throw new Error(`Telegram chat id must be an integer, got "${chatId}"`);
    if (threadId === undefined) return `${PREFIX}:${chatId}`;
    if (!TOPIC_ID_RE.test(threadId)) throw new Error(`Telegram topic id must be a positive integer, got "${threadId}"`);
    return `${PREFIX}:${chatId}:${threadId}`;
  },

  decode(id) {
    const parts = id.split(':');
    if (parts[0] !== PREFIX) throw new Error(`not a Telegram conversation id: "${id}"`);
    const [, chatId, threadId, ...rest] = parts;
    if (rest.length > 0 || chatId === undefined || !CHAT_ID_RE.test(chatId)) {
      throw new Error(`malformed Telegram conversation id: "${id}" (expected telegram:<chat_id>[:<topic_id>])`);
    }
    if (threadId === undefined) return { chatId };
    if (!TOPIC_ID_RE.test(threadId)) {
      throw new Error(`malformed Telegram conversation id: "${id}" (topic id must be a positive integer)`);
    }
    return { chatId, threadId };
  },
};
