/**
 * Telegram helpers for end-to-end tests: the gateway's environment for the stand-ins, what the bot sent where
 * (chat, forum topic), the entities a user sees on a bot message, and posting to the gateway's webhook the way
 * Telegram does.
 */
import type { SentRecord, TelegramFake } from '../fakes/telegram/index.js';
import type { Entity, JsonObject } from '../fakes/telegram/index.js';

export { repliesIn, telegramEnv } from './env.js';

/** The header Telegram puts the webhook's secret_token in. */
export const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

export interface SentFilter {
  /** A forum topic id; `null` for messages sent without one (the chat itself, or the General topic). */
  threadId?: number | null;
  method?: string;
}

/** Successful writes of one method (default sendMessage) to one chat, optionally one topic, in order. */
export function sentIn(tg: TelegramFake, chatId: number, filter: SentFilter = {}): SentRecord[] {
  const method = filter.method ?? 'sendMessage';
  return tg.sent.filter((s) => {
    if (s.method !== method || s.chat_id !== String(chatId)) return false;
    if (filter.threadId === undefined) return true;
    return filter.threadId === null ? s.message_thread_id === undefined : s.message_thread_id === filter.threadId;
  });
}

/** The entities (bold, pre, links…) Telegram stored on a message the bot sent, as a client would render them. */
function entitiesOf(tg: TelegramFake, sent: SentRecord): Entity[] {
  const msg = tg.world.chats.get(Number(sent.chat_id))?.messages.get(sent.message_id ?? -1);
  return (msg?.entities ?? []) as unknown as Entity[];
}

/** The parts of a message's text that a client shows as code blocks (`pre` entities), with their language. */
export function codeBlocksOf(tg: TelegramFake, sent: SentRecord): Array<{ code: string; language?: string }> {
  const text = sent.text ?? '';
  return entitiesOf(tg, sent)
    .filter((e) => e.type === 'pre')
    .map((e) => ({ code: text.slice(e.offset, e.offset + e.length), ...(e.language !== undefined && { language: e.language }) }));
}

/** The message_id of the message inside an update the stand-in returned from injectMessage. */
export function messageIdOf(update: JsonObject): number {
  const id = (update.message as JsonObject | undefined)?.message_id;
  if (typeof id !== 'number') throw new Error('update carries no message');
  return id;
}

/** POSTs an update to a webhook URL as Telegram does; `secret` undefined sends no secret header. */
export async function postUpdate(url: string, update: Record<string, unknown>, secret?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret !== undefined && { [TELEGRAM_SECRET_HEADER]: secret }) },
    body: JSON.stringify(update),
  });
}

/** A private-chat text message update in the Bot API's shape, for posting straight to a webhook. */
export function privateTextUpdate(o: { updateId: number; chatId: number; messageId: number; text: string }): Record<string, unknown> {
  return {
    update_id: o.updateId,
    message: {
      message_id: o.messageId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: o.chatId, type: 'private', first_name: `User${o.chatId}` },
      from: { id: o.chatId, is_bot: false, first_name: `User${o.chatId}` },
      text: o.text,
    },
  };
}

/**
 * A long text of numbered lines (`length` characters) and the parts a Telegram client sends it as: Telegram Desktop
 * cuts at the last line break within 4,096 characters, and Telegram trims the break away from the next part. The
 * parts joined by a line break are the text again.
 */
export function clientSplitText(label: string, length: number): { full: string; parts: string[] } {
  const lines: string[] = [];
  for (let n = 1; lines.join('\n').length < length; n++) lines.push(`${label} line ${n}: a long question, pasted in one go.`);
  const full = lines.join('\n').slice(0, length).trimEnd(); // Telegram trims a message's ends
  const parts: string[] = [];
  let left = full;
  while (left.length > 4096) {
    const cut = left.lastIndexOf('\n', 4096);
    parts.push(left.slice(0, cut));
    left = left.slice(cut + 1);
  }
  return { full, parts: [...parts, left] };
}
