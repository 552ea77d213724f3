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

/**
 * The id rules, on numbers as the Bot API sends them: wire.ts checks every update with these, so an update it lets
 * in can always be encoded, and a string id is valid exactly when it is one of these numbers written plainly.
 */
/** A chat id: any non-zero safe integer (users positive, groups negative, supergroups and channels -100…). */
export function isTelegramChatId(v: unknown): v is number {
  return Number.isSafeInteger(v) && v !== 0;
}

/** A forum topic id (a message thread id): a positive safe integer. */
export function isTelegramTopicId(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) > 0;
}

/** `s` is a number written the way String() writes it (no sign on 0, no exponent, no leading zeros) that passes `rule`. */
function written(s: string, rule: (n: number) => boolean): boolean {
  const n = Number(s);
  return String(n) === s && rule(n);
}

const isChatIdText = (s: string): boolean => written(s, isTelegramChatId);
const isTopicIdText = (s: string): boolean => written(s, isTelegramTopicId);

export const telegramCodec: ConversationCodec<TelegramConversation> = {
  encode({ chatId, threadId }) {
    if (!isChatIdText(chatId)) throw new Error(`Telegram chat id must be an integer, got "${chatId}"`);
    if (threadId === undefined) return `${PREFIX}:${chatId}`;
    if (!isTopicIdText(threadId)) throw new Error(`Telegram topic id must be a positive integer, got "${threadId}"`);
    return `${PREFIX}:${chatId}:${threadId}`;
  },

  decode(id) {
    const parts = id.split(':');
    if (parts[0] !== PREFIX) throw new Error(`not a Telegram conversation id: "${id}"`);
    const [, chatId, threadId, ...rest] = parts;
    if (rest.length > 0 || chatId === undefined || !isChatIdText(chatId)) {
      throw new Error(`malformed Telegram conversation id: "${id}" (expected telegram:<chat_id>[:<topic_id>])`);
    }
    if (threadId === undefined) return { chatId };
    if (!isTopicIdText(threadId)) {
      throw new Error(`malformed Telegram conversation id: "${id}" (topic id must be a positive integer)`);
    }
    return { chatId, threadId };
  },
};
