/**
 * The slice of the Bot API update format this adapter reads, and the one guard that turns an untrusted update
 * (webhook body, getUpdates result) into it. Field names are Telegram's own.
 */

export interface TgUser {
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
  forum_topic_created?: { name: string };
}

export interface TgMessageUpdate {
  update_id: number;
  message: TgMessage;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when `u` has an integer update_id; the only thing dedupe and offset tracking need. */
export function hasUpdateId(u: unknown): u is { update_id: number } {
  return isRecord(u) && Number.isSafeInteger(u.update_id);
}

/** True for a `message` update whose message carries the fields normalisation relies on. */
export function isMessageUpdate(u: unknown): u is TgMessageUpdate {
  if (!isRecord(u) || !Number.isSafeInteger(u.update_id)) return false;
  const m = u.message;
  return (
    isRecord(m) &&
    Number.isSafeInteger(m.message_id) &&
    typeof m.date === 'number' &&
    isRecord(m.chat) &&
    Number.isSafeInteger(m.chat.id) &&
    typeof m.chat.type === 'string'
  );
}
