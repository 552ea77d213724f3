/**
 * Bot API methods of the stand-in, with Telegram's validation and error descriptions.
 * Each handler gets the parsed parameters (JSON or form-encoded, already coerced) and returns `result`.
 */
import { ApiError, badRequest, telegramErrors } from './errors.js';
import { parseTelegramHtml, type Entity } from './html.js';
import { toInt as int } from './http-body.js';
import type { FakeChat, Json, JsonObject } from './state.js';
import type { FakeContext } from './types.js';
import type { UploadedPart } from '../media/multipart.js';

const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;

/** A result Telegram sends with a `description` next to it (setWebhook, deleteWebhook). */
export class Described {
  constructor(
    readonly result: Json,
    readonly description: string,
  ) {}
}

/** `files`: the multipart file parts of the request (uploads.ts). */
export type Handler = (ctx: FakeContext, p: JsonObject, onClose: (cb: () => void) => void, files: UploadedPart[]) => Json | Described | Promise<Json>;

const CHAT_ACTIONS = new Set([
  'typing',
  'upload_photo',
  'record_video',
  'upload_video',
  'record_voice',
  'upload_voice',
  'upload_document',
  'choose_sticker',
  'find_location',
  'record_video_note',
  'upload_video_note',
]);

/** Reactions a bot may set (Bot API ReactionTypeEmoji). */
const REACTION_EMOJI = new Set(
  (
    '👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤‍🔥 🌚 🌭 💯 🤣 ⚡ 🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 ' +
    '👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂ 🤷 🤷‍♀ 😡'
  ).split(' '),
);

const bool = (v: Json | undefined): boolean => v === true || v === 'true' || v === '1';

function obj(v: Json | undefined): JsonObject | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;
}

export function requireChat(ctx: FakeContext, p: JsonObject): FakeChat {
  if (p.chat_id === undefined || p.chat_id === '') throw badRequest('chat_id is empty');
  const chat = ctx.world.findChat(p.chat_id);
  if (!chat) throw new ApiError(telegramErrors.chatNotFound());
  return chat;
}

/** The text and entities Telegram would store, or its parse error. Length is checked after parsing. */
function parseText(p: JsonObject): { text: string; entities: Entity[] } {
  const raw = typeof p.text === 'string' ? p.text : p.text === undefined ? '' : String(p.text);
  let text = raw;
  let entities: Entity[] = [];
  const mode = p.parse_mode;
  if (mode === 'HTML') {
    const parsed = parseTelegramHtml(raw);
    if (!parsed.ok) throw badRequest(`can't parse entities: ${parsed.error}`);
    ({ text, entities } = parsed);
  } else if (mode !== undefined && mode !== '' && mode !== 'Markdown' && mode !== 'MarkdownV2') {
    throw badRequest('unsupported parse_mode');
  }
  if (text.trim() === '') throw badRequest('message text is empty');
  if (text.length > TELEGRAM_MAX_MESSAGE_LENGTH) throw badRequest('message is too long');
  return { text, entities };
}

/** Topic a bot message goes to. Forums refuse unknown topics, General included (it is addressed by omission). */
export function topicFor(chat: FakeChat, p: JsonObject, allowGeneral: boolean): number | undefined {
  const thread = int(p.message_thread_id);
  if (thread === undefined || !chat.isForum) return undefined;
  if (thread === 1 && allowGeneral) return 1;
  if (!chat.topics.has(thread)) throw new ApiError(telegramErrors.threadNotFound());
  return thread;
}

export function replyTarget(chat: FakeChat, p: JsonObject): JsonObject | undefined {
  const params = obj(p.reply_parameters);
  const id = int(params?.message_id) ?? int(p.reply_to_message_id);
  if (id === undefined) return undefined;
  const target = chat.messages.get(id);
  if (target) return target;
  if (bool(params?.allow_sending_without_reply) || bool(p.allow_sending_without_reply)) return undefined;
  throw new ApiError(telegramErrors.replyNotFound());
}

/** A new message by the bot in `chat` (in a topic, replying to `reply`), stored as Telegram keeps it. */
export function postBotMessage(ctx: FakeContext, chat: FakeChat, thread: number | undefined, reply: JsonObject | undefined, content: JsonObject): JsonObject {
  const message: JsonObject = {
    message_id: ctx.world.allocateMessageId(chat),
    from: ctx.world.botUser(),
    chat: ctx.world.chatJson(chat),
    date: Math.floor(Date.now() / 1000),
    ...(thread !== undefined && { message_thread_id: thread, is_topic_message: true }),
    ...(reply && { reply_to_message: ctx.world.replyView(reply) }),
    ...content,
  };
  chat.messages.set(message.message_id as number, message);
  return message;
}

function sameEntities(a: Json | undefined, b: Entity[]): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b);
}

/** Telegram: callback_data is 1-64 bytes; a button needs text. Returns the markup to store on the message. */
function inlineKeyboardOf(p: JsonObject): JsonObject | undefined {
  const markup = obj(p.reply_markup);
  if (!markup) return undefined;
  const rows = markup.inline_keyboard;
  if (!Array.isArray(rows) || !rows.every(Array.isArray)) throw badRequest("can't parse inline keyboard button: InlineKeyboardButton must be an Object");
  for (const row of rows as Json[][]) {
    for (const b of row) {
      const button = obj(b);
      if (!button || typeof button.text !== 'string' || button.text === '') throw badRequest('BUTTON_TEXT_INVALID');
      const data = button.callback_data;
      if (typeof data !== 'string' || Buffer.byteLength(data) < 1 || Buffer.byteLength(data) > 64) throw badRequest('BUTTON_DATA_INVALID');
    }
  }
  return { inline_keyboard: rows };
}

export const METHODS: Record<string, Handler> = {
  /**
   * Bot API 9.3: a draft streamed to a private chat while the answer is written; not a message (nothing stored),
   * updated in place for the same non-zero draft_id. Text 0-4096 characters after parsing.
   */
  sendMessageDraft: (ctx, p) => {
    if (!ctx.draftsSupported) throw new ApiError(telegramErrors.notFound());
    const chat = requireChat(ctx, p);
    if (chat.type !== 'private') throw badRequest('TEXTDRAFT_PEER_INVALID');
    const draftId = int(p.draft_id);
    if (draftId === undefined || draftId === 0) throw badRequest('TEXTDRAFT_ID_INVALID');
    topicFor(chat, p, true);
    const { text } = parseText(p);
    ctx.sent.push({ method: 'sendMessageDraft', chat_id: String(chat.id), text, params: p });
    return true;
  },
  answerCallbackQuery: (ctx, p) => {
    const id = typeof p.callback_query_id === 'string' ? p.callback_query_id : '';
    const query = ctx.callbackQueries.get(id);
    if (!query || query.answered) throw badRequest('query is too old and response timeout expired or query ID is invalid');
    const text = typeof p.text === 'string' ? p.text : undefined;
    if (text !== undefined && text.length > 200) throw badRequest('MESSAGE_TOO_LONG');
    query.answered = true;
    ctx.sent.push({ method: 'answerCallbackQuery', chat_id: '', ...(text !== undefined && { text }), params: p });
    return true;
  },

  getMe: (ctx) => ({
    ...ctx.world.botUser(),
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
  }),

  getUpdates: (ctx, p, onClose) => {
    if (ctx.webhook) throw new ApiError(telegramErrors.webhookActive());
    return ctx.longPoll(p, onClose);
  },

  setWebhook: (ctx, p) => {
    const url = typeof p.url === 'string' ? p.url : '';
    const secret = p.secret_token;
    if (secret !== undefined && (typeof secret !== 'string' || !/^[A-Za-z0-9_-]{1,256}$/.test(secret))) {
      throw badRequest('secret token contains unallowed characters');
    }
    // Real Telegram insists on https; the stand-in takes http so tests can point it at 127.0.0.1.
    if (url !== '' && !/^https?:\/\//.test(url)) throw badRequest('bad webhook: An HTTPS URL must be provided for webhook');
    if (bool(p.drop_pending_updates)) ctx.world.updates.length = 0;
    const allowed = Array.isArray(p.allowed_updates) ? p.allowed_updates.map(String) : undefined;
    if (allowed) ctx.allowedUpdates = allowed;
    if (url === '') {
      ctx.setWebhook(null);
      return new Described(true, 'Webhook was deleted');
    }
    ctx.setWebhook({ url, ...(typeof secret === 'string' && { secret_token: secret }), ...(allowed && { allowed_updates: allowed }) });
    return new Described(true, 'Webhook was set');
  },

  deleteWebhook: (ctx, p) => {
    if (bool(p.drop_pending_updates)) ctx.world.updates.length = 0;
    const had = ctx.webhook !== null;
    ctx.setWebhook(null);
    return new Described(true, had ? 'Webhook was deleted' : 'Webhook is already deleted');
  },

  getWebhookInfo: (ctx) => ({
    url: ctx.webhook?.url ?? '',
    has_custom_certificate: false,
    pending_update_count: ctx.world.updates.length,
    ...(ctx.allowedUpdates && { allowed_updates: ctx.allowedUpdates }),
  }),

  sendMessage: (ctx, p) => {
    const chat = requireChat(ctx, p);
    const thread = topicFor(chat, p, false);
    const { text, entities } = parseText(p);
    const reply = replyTarget(chat, p);
    const keyboard = inlineKeyboardOf(p);
    const message = postBotMessage(ctx, chat, thread, reply, {
      text,
      ...(entities.length > 0 && { entities: entities as unknown as Json }),
      ...(keyboard && { reply_markup: keyboard }),
    });
    ctx.sent.push({
      method: 'sendMessage',
      chat_id: String(chat.id),
      text,
      ...(typeof p.parse_mode === 'string' && { parse_mode: p.parse_mode }),
      ...(int(p.message_thread_id) !== undefined && { message_thread_id: int(p.message_thread_id) }),
      ...(reply && { reply_to_message_id: reply.message_id as number }),
      message_id: message.message_id as number,
      params: p,
    });
    return message;
  },

  editMessageText: (ctx, p) => {
    if (p.inline_message_id !== undefined) throw badRequest('inline messages are not supported by the stand-in');
    const chat = requireChat(ctx, p);
    const id = int(p.message_id);
    const message = id === undefined ? undefined : chat.messages.get(id);
    if (!message) throw badRequest('message to edit not found');
    if ((message.from as JsonObject | undefined)?.id !== ctx.world.bot.id) throw badRequest("message can't be edited");
    const { text, entities } = parseText(p);
    if (message.text === text && sameEntities(message.entities, entities)) {
      throw new ApiError(telegramErrors.notModified());
    }
    message.text = text;
    if (entities.length > 0) message.entities = entities as unknown as Json;
    else delete message.entities;
    message.edit_date = Math.floor(Date.now() / 1000);
    ctx.sent.push({
      method: 'editMessageText',
      chat_id: String(chat.id),
      text,
      ...(typeof p.parse_mode === 'string' && { parse_mode: p.parse_mode }),
      message_id: id,
      params: p,
    });
    return message;
  },

  sendChatAction: (ctx, p) => {
    const chat = requireChat(ctx, p);
    const action = typeof p.action === 'string' ? p.action : '';
    if (!CHAT_ACTIONS.has(action)) throw badRequest('wrong parameter action in request');
    topicFor(chat, p, true);
    ctx.sent.push({
      method: 'sendChatAction',
      chat_id: String(chat.id),
      action,
      ...(int(p.message_thread_id) !== undefined && { message_thread_id: int(p.message_thread_id) }),
      params: p,
    });
    return true;
  },

  setMessageReaction: (ctx, p) => {
    const chat = requireChat(ctx, p);
    const id = int(p.message_id);
    if (id === undefined || !chat.messages.has(id)) throw badRequest('message to react not found');
    const reaction = Array.isArray(p.reaction) ? p.reaction : [];
    if (reaction.length > 1) throw badRequest('REACTIONS_TOO_MANY');
    for (const r of reaction) {
      const emoji = obj(r)?.emoji;
      if (obj(r)?.type !== 'emoji' || typeof emoji !== 'string' || !REACTION_EMOJI.has(emoji) || !chat.reactionsEnabled) {
        throw new ApiError(telegramErrors.reactionInvalid());
      }
    }
    ctx.sent.push({ method: 'setMessageReaction', chat_id: String(chat.id), message_id: id, reaction, params: p });
    return true;
  },

  setMyCommands: (ctx, p) => {
    const commands = Array.isArray(p.commands) ? p.commands : null;
    if (!commands) throw badRequest('parameter "commands" is required');
    if (commands.length > 100) throw badRequest('too many commands specified');
    for (const c of commands) {
      const command = obj(c)?.command;
      const description = obj(c)?.description;
      if (typeof command !== 'string' || !/^[a-z0-9_]{1,32}$/.test(command)) throw badRequest('BOT_COMMAND_INVALID');
      if (typeof description !== 'string' || description.length < 1 || description.length > 256) {
        throw badRequest('command description is empty or too long');
      }
    }
    ctx.commands = commands;
    ctx.sent.push({ method: 'setMyCommands', chat_id: '', params: p });
    return true;
  },

  getMyCommands: (ctx) => (Array.isArray(ctx.commands) ? ctx.commands : []),

  getFile: (ctx, p) => {
    const file = typeof p.file_id === 'string' ? ctx.world.files.get(p.file_id) : undefined;
    if (!file) throw badRequest('invalid file_id');
    // The Bot API hands out files up to 20 MB only.
    if (file.content.length > 20 * 1024 * 1024) throw badRequest('file is too big');
    return { file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.content.length, file_path: file.filePath };
  },
};
