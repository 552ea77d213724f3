/**
 * Telegram message -> InboundMessage, or the reason it is not for us.
 *
 * Private chats are `dm`; groups and supergroups are `group`. In forum supergroups every message belongs to a
 * topic: `message_thread_id` when `is_topic_message`, else the General topic (id 1). In non-forum groups
 * `message_thread_id` only marks reply chains and is ignored.
 *
 * And before that, Herald's own update dispatcher (readUpdate, routeUpdate, at the end): an update from getUpdates or
 * the webhook is read once as untrusted input, then goes to the handler of its type. It replaces telegraf's
 * `Telegraf` (its middleware chain, a `Context` per update and a second API client), which did nothing here but this
 * routing. The handlers are keyed by the update types Herald asks Telegram for (TELEGRAM_ALLOWED_UPDATES), so asking
 * for another type without handling it does not compile.
 */
import type { Attachment, ChatType, InboundMessage } from '../types.js';
import { telegramCodec } from './codec.js';
import { TELEGRAM_FILE_REF_PREFIX, TELEGRAM_GENERAL_TOPIC_ID, type TELEGRAM_ALLOWED_UPDATES } from './config.js';
import { kindOfMime } from '../shared/attachment-kind.js';
import { hasUpdateId, isCallbackQuery, isMessageUpdate, type TgCallbackQuery, type TgChat, type TgEntity, type TgFile, type TgMessage } from './wire.js';

export type { TgCallbackQuery };

export interface NormalizeOptions {
  bot: BotIdentity;
  /** Groups only: take a message only when it mentions the bot, replies to it or is a command. */
  requireMention: boolean;
}

export type NormalizeResult =
  | {
      accepted: true;
      message: InboundMessage;
      /** Plain text that may be the first or next part of a text the client split; commands and media are not. */
      joinable: boolean;
    }
  | { accepted: false; reason: 'own-message' | 'unsupported-chat' | 'not-addressed' | 'other-bot-command' | 'empty' };

export function normalizeMessage(msg: TgMessage, opts: NormalizeOptions): NormalizeResult {
  const { bot } = opts;
  if (msg.from?.id === bot.id) return { accepted: false, reason: 'own-message' };
  const chatType = chatTypeOf(msg.chat);
  if (chatType === null) return { accepted: false, reason: 'unsupported-chat' };

  const rawText = msg.text ?? msg.caption ?? '';
  const entities = (msg.text !== undefined ? msg.entities : msg.caption_entities) ?? [];
  const addressing = readAddressing(rawText, entities, bot);
  const reply = realReply(msg);
  const repliesToBot = reply?.from?.id === bot.id;

  if (chatType === 'group') {
    if (addressing.command === 'other-bot') return { accepted: false, reason: 'other-bot-command' };
    const addressed = addressing.mentioned || repliesToBot || addressing.command === 'ours';
    if (opts.requireMention && !addressed) return { accepted: false, reason: 'not-addressed' };
  }

  const attachments = attachmentsOf(msg);
  if (addressing.text === '' && attachments.length === 0) return { accepted: false, reason: 'empty' };

  const chatId = String(msg.chat.id);
  const threadId = topicOf(msg);
  const message: InboundMessage = {
    platform: 'telegram',
    messageId: `${chatId}:${msg.message_id}`,
    conversationId: telegramCodec.encode({ chatId, threadId }),
    chatType,
    chatId,
    ...(threadId !== undefined && { threadId }),
    userId: String(msg.from?.id ?? msg.chat.id),
    ...(userNameOf(msg) !== undefined && { userName: userNameOf(msg) }),
    text: addressing.text,
    attachments,
    platformMessageId: String(msg.message_id),
    ...(reply && {
      quoted: {
        platformMessageId: String(reply.message_id),
        text: msg.quote?.text ?? reply.text ?? reply.caption ?? '',
        fromBot: repliesToBot,
      },
    }),
    sentAt: msg.date * 1000,
    // Telegram sends each file of an album as its own message, all with the same media_group_id.
    ...(msg.media_group_id !== undefined && attachments.length > 0 && { partOf: { id: msg.media_group_id, kind: 'album' as const } }),
  };
  const joinable = addressing.command === null && attachments.length === 0;
  return { accepted: true, message, joinable };
}

function chatTypeOf(chat: TgChat): ChatType | null {
  switch (chat.type) {
    case 'private':
      return 'dm';
    case 'group':
    case 'supergroup':
      return 'group';
    default:
      return null; // channel posts have no user to answer
  }
}

function topicOf(msg: TgMessage): string | undefined {
  if (!msg.chat.is_forum) return undefined;
  if (msg.is_topic_message && msg.message_thread_id !== undefined) return String(msg.message_thread_id);
  return TELEGRAM_GENERAL_TOPIC_ID;
}

/**
 * The message the user actually replied to. Inside a forum topic Telegram fills `reply_to_message` with the
 * topic's creation message even when the user replied to nothing; that is not a reply.
 */
function realReply(msg: TgMessage): TgMessage | undefined {
  const r = msg.reply_to_message;
  if (r === undefined) return undefined;
  if (msg.is_topic_message && r.message_id === msg.message_thread_id && r.forum_topic_created !== undefined) {
    return undefined;
  }
  return r;
}

function userNameOf(msg: TgMessage): string | undefined {
  const u = msg.from;
  if (u === undefined) return msg.chat.title;
  if (u.username) return u.username;
  const full = [u.first_name, u.last_name].filter(Boolean).join(' ');
  return full || undefined;
}

function fileAttachment(kind: Attachment['kind'], f: TgFile, defaultMime?: string): Attachment {
  const a: Attachment = { kind, url: `${TELEGRAM_FILE_REF_PREFIX}${f.file_id}`, fileId: f.file_id };
  const mimeType = f.mime_type ?? defaultMime;
  if (mimeType !== undefined) a.mimeType = mimeType;
  if (f.file_name !== undefined) a.name = f.file_name;
  if (f.file_size !== undefined) a.size = f.file_size;
  return a;
}

/** Files become `tg-file:<file_id>` references; the worker resolves them with getFile when it needs the bytes. */
function attachmentsOf(msg: TgMessage): Attachment[] {
  const out: Attachment[] = [];
  if (msg.photo && msg.photo.length > 0) {
    // Telegram sends every size it made; the last is the largest.
    out.push(fileAttachment('image', msg.photo[msg.photo.length - 1], 'image/jpeg'));
  }
  if (msg.document) out.push(fileAttachment(kindOfMime(msg.document.mime_type), msg.document));
  if (msg.voice) out.push({ ...fileAttachment('audio', msg.voice, 'audio/ogg'), voice: true });
  if (msg.audio) out.push(fileAttachment('audio', msg.audio));
  if (msg.video) out.push(fileAttachment('video', msg.video));
  if (msg.video_note) out.push(fileAttachment('video', msg.video_note, 'video/mp4'));
  if (msg.animation && !msg.document) out.push(fileAttachment('video', msg.animation));
  return out;
}

/**
 * A button press → an InboundMessage with `press.data` and no text, in the conversation of the message the button
 * is under (its topic too); answered once through answerCallbackQuery (`interaction.id`). Null for a press
 * without data or message (a game button, or a message too old for Telegram to include).
 */
export function normalizeCallbackQuery(q: TgCallbackQuery): InboundMessage | null {
  // A malformed query is dropped, never failed (a failed update is delivered again); wire.ts has the rules.
  if (!isCallbackQuery(q)) return null;
  const msg = q.message;
  if (msg === undefined || q.data === undefined || msg.date === 0) return null;
  const chatType = chatTypeOf(msg.chat);
  if (chatType === null) return null;
  const chatId = String(msg.chat.id);
  const threadId = topicOf(msg);
  const name = q.from.username || [q.from.first_name, q.from.last_name].filter(Boolean).join(' ');
  return {
    platform: 'telegram',
    messageId: `cb:${q.id}`,
    conversationId: telegramCodec.encode({ chatId, threadId }),
    chatType,
    chatId,
    ...(threadId !== undefined && { threadId }),
    userId: String(q.from.id),
    ...(name && { userName: name }),
    text: '',
    attachments: [],
    // Replies to a press answer the message that carried the buttons.
    platformMessageId: String(msg.message_id),
    sentAt: Date.now(),
    interaction: { kind: 'press', id: q.id, ephemeral: true },
    press: { data: q.data },
  };
}

export interface BotIdentity {
  id: number;
  username: string;
}

interface Addressing {
  /** The text with the bot's mentions removed and its command suffix dropped. */
  text: string;
  /** `@ourbot`, or a text_mention of the bot's user. */
  mentioned: boolean;
  /** A leading `/command`: ours (plain or `@ourbot`), addressed to another bot, or none. */
  command: 'ours' | 'other-bot' | null;
}

/** Leading punctuation people put after an opening mention: "@bot, hi" / "@bot: hi". */
const LEADING_SEPARATORS_RE = /^[\s,:;]+/;

/**
 * Is a group message addressed to the bot? Reads Telegram's entities (offsets are UTF-16, like JS strings),
 * strips the bot's own mentions and turns `/cmd@ourbot` into `/cmd` so the gateway sees plain commands.
 */
function readAddressing(text: string, entities: readonly TgEntity[], bot: BotIdentity): Addressing {
  const handle = `@${bot.username}`.toLowerCase();
  let out = text;
  let mentioned = false;
  let command: Addressing['command'] = null;

  // Edit from the end so earlier offsets stay valid.
  const sorted = [...entities].sort((a, b) => b.offset - a.offset);
  for (const e of sorted) {
    const slice = text.slice(e.offset, e.offset + e.length);
    if (e.type === 'mention' && slice.toLowerCase() === handle) {
      mentioned = true;
      out = removeSpan(out, e.offset, e.length);
    } else if (e.type === 'text_mention' && e.user?.id === bot.id) {
      mentioned = true;
      out = removeSpan(out, e.offset, e.length);
    } else if (e.type === 'bot_command' && e.offset === 0) {
      const at = slice.indexOf('@');
      if (at === -1) command = 'ours';
      else if (slice.slice(at).toLowerCase() === handle) {
        command = 'ours';
        out = out.slice(0, at) + out.slice(e.length);
      } else command = 'other-bot';
    }
  }
  return { text: out.trim(), mentioned, command };
}

function removeSpan(s: string, offset: number, length: number): string {
  const before = s.slice(0, offset);
  let after = s.slice(offset + length);
  if (before.trim() === '') return before + after.replace(LEADING_SEPARATORS_RE, '');
  // "hey @bot what" -> "hey what": drop one of the two spaces that surrounded the mention.
  if (/\s$/.test(before) && /^ /.test(after)) after = after.slice(1);
  return before + after;
}

type UpdateType = (typeof TELEGRAM_ALLOWED_UPDATES)[number];

/** What each update type carries to its handler. */
interface Payloads {
  message: TgMessage;
  /** A button press, already normalised (an unreadable one never gets this far). */
  callback_query: InboundMessage;
}

/** One handler per update type; a rejection means the update was not taken (Telegram will send it again). */
export type UpdateHandlers = { [T in UpdateType]: (payload: Payloads[T]) => Promise<void> };

/** An update Herald can route: its id, and what its handler is given (none for a type Herald does not ask for). */
export type ReadUpdate = { id: number } & ({ [T in UpdateType]: { type: T; payload: Payloads[T] } }[UpdateType] | { type: 'other' });

/**
 * Why an update is not routed: `invalid` (no update id, or a message Herald cannot read — refused whole: half-read
 * it could be taken for another message), `dropped` (a press Herald cannot read — failing it would only make
 * Telegram deliver it again). `malformed`: the press breaks the Bot API's types (an id that cannot be one), as no
 * real Telegram sends, rather than being one Herald has no use for.
 */
export interface UnreadUpdate {
  refused: 'invalid' | 'dropped';
  id?: number;
  malformed?: true;
}

/** Reads an update as sent. A message wins over a press when an update carries both, as it did with telegraf. */
export function readUpdate(update: unknown): ReadUpdate | UnreadUpdate {
  if (!hasUpdateId(update)) return { refused: 'invalid' };
  const id = update.update_id;
  if ('message' in update && !isMessageUpdate(update)) return { refused: 'invalid', id };
  let press: InboundMessage | null = null;
  if ('callback_query' in update) {
    const query = update.callback_query;
    if (!isCallbackQuery(query)) return { refused: 'dropped', id, malformed: true };
    press = normalizeCallbackQuery(query);
    if (press === null) return { refused: 'dropped', id };
  }
  if (isMessageUpdate(update)) return { id, type: 'message', payload: update.message };
  if (press !== null) return { id, type: 'callback_query', payload: press };
  return { id, type: 'other' };
}

export function isRead(u: ReadUpdate | UnreadUpdate): u is ReadUpdate {
  return !('refused' in u);
}

/** Runs the update's handler; an update of another type is taken as it is (nothing to do). */
export function routeUpdate(update: ReadUpdate, handlers: UpdateHandlers): Promise<void> {
  switch (update.type) {
    case 'message':
      return handlers.message(update.payload);
    case 'callback_query':
      return handlers.callback_query(update.payload);
    default:
      return Promise.resolve();
  }
}
