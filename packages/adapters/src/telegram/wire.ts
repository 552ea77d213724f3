/**
 * The slice of the Bot API update format this adapter reads, and the one guard that turns an untrusted update
 * (webhook body, getUpdates result) into it. Field names are Telegram's own.
 *
 * Every id field is checked here, once, by the rule that holds for it: chat and topic ids by the conversation
 * codec's own rules (codec.ts), so a message let in here can always be given a conversation id.
 */
import { isTelegramChatId, isTelegramTopicId } from './codec.js';
import { isRecord } from '../shared/wire-values.js';

interface TgUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  last_name?: string;
  username?: string;
}

export interface TgChat {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
  username?: string;
  is_forum?: boolean;
}

export interface TgEntity {
  type: string;
  offset: number;
  length: number;
  user?: TgUser;
}

export interface TgFile {
  file_id: string;
  file_unique_id?: string;
  file_size?: number;
  mime_type?: string;
  file_name?: string;
}

export interface TgMessage {
  message_id: number;
  date: number;
  chat: TgChat;
  from?: TgUser;
  message_thread_id?: number;
  is_topic_message?: boolean;
  text?: string;
  entities?: TgEntity[];
  caption?: string;
  caption_entities?: TgEntity[];
  reply_to_message?: TgMessage;
  /** The part of the replied-to message the user quoted. */
  quote?: { text: string };
  photo?: TgFile[];
  document?: TgFile;
  voice?: TgFile;
  audio?: TgFile;
  video?: TgFile;
  video_note?: TgFile;
  animation?: TgFile;
  /** Set on every message of an album (photos/videos/documents sent together). */
  media_group_id?: string;
  forum_topic_created?: { name: string };
}

export interface TgMessageUpdate {
  update_id: number;
  message: TgMessage;
}

/** What a callback_query update carries (a press of an inline keyboard button). */
export interface TgCallbackQuery {
  id: string;
  from: TgUser;
  /** Absent when the message is too old; `date` 0 when Herald can no longer see it (an inaccessible message). */
  message?: TgMessage;
  data?: string;
}

/** A Bot API message id: a positive integer (Telegram numbers a chat's messages from 1). */
export function isMessageId(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) > 0;
}

/** An update id: a positive integer (Telegram numbers updates upwards from a positive number). */
export function isUpdateId(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) > 0;
}

/** A user id (a person or a bot): a positive integer. */
export function isUserId(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) > 0;
}

/** True when `u` has a valid update_id; the only thing dedupe and offset tracking need. */
export function hasUpdateId(u: unknown): u is { update_id: number } {
  return isRecord(u) && isUpdateId(u.update_id);
}

/**
 * True for a `message` update whose message has the Bot API's types in every field this adapter reads (see
 * TgMessage): a field may be absent, but one that is present with another type (text a number, an entity null)
 * makes the whole message unreadable rather than half-read. Fields not listed are not looked at.
 */
export function isMessageUpdate(u: unknown): u is TgMessageUpdate {
  return isRecord(u) && isUpdateId(u.update_id) && isMessage(u.message, true);
}

/**
 * True for a callback query with the Bot API's types in every field Herald reads, ids included; `data` and
 * `message` may be absent (a game button, a message too old to be sent along).
 */
export function isCallbackQuery(q: unknown): q is TgCallbackQuery {
  return isCallbackQueryShape(q);
}

type Check = (v: unknown) => boolean;

const isString: Check = (v) => typeof v === 'string';
const isBoolean: Check = (v) => typeof v === 'boolean';
const isInteger: Check = (v) => Number.isSafeInteger(v);

/** Each listed field is absent, or passes its check. */
function fieldsOk(v: Record<string, unknown>, checks: Record<string, Check>): boolean {
  return Object.entries(checks).every(([key, check]) => v[key] === undefined || check(v[key]));
}

function shape(required: Record<string, Check>, optional: Record<string, Check> = {}): Check {
  return (v) => isRecord(v) && Object.entries(required).every(([key, check]) => check(v[key])) && fieldsOk(v, optional);
}

const arrayOf =
  (check: Check): Check =>
  (v) =>
    Array.isArray(v) && v.every(check);

const isNonEmptyString: Check = (v) => typeof v === 'string' && v !== '';

const isUser = shape({ id: isUserId }, { is_bot: isBoolean, first_name: isString, last_name: isString, username: isString });
const isChat = shape({ id: isTelegramChatId, type: isString }, { title: isString, username: isString, is_forum: isBoolean });
const isEntity = shape({ type: isString, offset: isInteger, length: isInteger }, { user: isUser });
const isFile = shape({ file_id: isString }, { file_unique_id: isString, file_size: isInteger, mime_type: isString, file_name: isString });
const MESSAGE_FIELDS: Record<string, Check> = {
  from: isUser,
  message_thread_id: isTelegramTopicId,
  is_topic_message: isBoolean,
  text: isString,
  entities: arrayOf(isEntity),
  caption: isString,
  caption_entities: arrayOf(isEntity),
  quote: shape({ text: isString }),
  photo: arrayOf(isFile),
  document: isFile,
  voice: isFile,
  audio: isFile,
  video: isFile,
  video_note: isFile,
  animation: isFile,
  media_group_id: isString,
  forum_topic_created: shape({ name: isString }),
};

/** Telegram never nests a reply inside a reply, so a replied-to message is checked one level deep only. */
function isMessage(m: unknown, outer: boolean): boolean {
  if (!isRecord(m) || !isMessageId(m.message_id) || !isInteger(m.date) || !isChat(m.chat) || !fieldsOk(m, MESSAGE_FIELDS)) return false;
  if (m.reply_to_message === undefined) return true;
  return outer && isMessage(m.reply_to_message, false);
}

const isCallbackQueryShape = shape({ id: isNonEmptyString, from: isUser }, { data: isString, message: (m) => isMessage(m, true) });
