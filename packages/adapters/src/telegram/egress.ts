/**
 * Replies through the Bot API only (no polling), so any worker process can send.
 *
 * Platform rules handled here: HTML with a plain-text resend when Telegram cannot parse it; the reply target
 * dropped if that message is gone; a deleted forum topic falls back to the chat; the General topic (id 1) is
 * omitted when sending but named when typing; "message is not modified" is a successful edit; reactions the
 * chat does not allow are ignored. 429s are waited out in `TelegramApi`.
 */
import type { Logger } from 'pino';
import type { TelegramEmoji } from 'telegraf/types';
import { BadRequestError } from '../errors.js';
import { chunkMessage } from '../shared/chunk.js';
import { sendChunks } from '../shared/send-chunks.js';
import type { Button, InteractionRef, OutboundFile, PlatformEgress, SendFileOptions, SendOptions, SentMessage, StatusReactions } from '../types.js';
import { isNotModified, isParseEntitiesError, isReactionRefused, isReplyNotFound, isThreadNotFound, toPlatformError } from './api-errors.js';
import { TelegramApi } from './api.js';
import { telegramCodec } from './codec.js';
import { TELEGRAM_GENERAL_TOPIC_ID, TELEGRAM_MAX_MESSAGE_LENGTH, TELEGRAM_TYPING_REFRESH_MS, type TelegramEgressOptions } from './config.js';
import { formatChunks, type OutgoingChunk } from './format.js';
import { uploadFile } from './upload.js';
import { isMessageId } from './wire.js';

const PLATFORM = 'telegram';
/** answerCallbackQuery shows at most 200 characters. */
const TELEGRAM_CALLBACK_NOTE_MAX = 200;

interface InlineKeyboard {
  inline_keyboard: Array<Array<{ text: string; callback_data: string }>>;
}

/** One button per row: choices are sentences as often as words, and a row of long labels gets cut off. */
function inlineKeyboard(buttons: readonly Button[]): InlineKeyboard {
  return { inline_keyboard: buttons.map((b) => [{ text: b.label, callback_data: b.data }]) };
}

interface Chunk {
  plain: string;
  /** null: send as plain text. */
  html: string | null;
}

interface Target {
  chatId: string;
  /** Topic to post in; undefined for the chat itself (and for the General topic, which refuses its own id). */
  threadId?: number;
}

export class TelegramEgress implements PlatformEgress {
  readonly platform = PLATFORM;
  readonly maxMessageLength = TELEGRAM_MAX_MESSAGE_LENGTH;
  readonly duplicateSafety = 'none' as const;
  readonly typingRefreshMs = TELEGRAM_TYPING_REFRESH_MS;
  /** Bots may only react with Telegram's fixed set (no ✅, ⚙️ or ⚠️), and one reaction at a time. */
  readonly statusReactions: StatusReactions = { queued: '👀', tools: '⚡', done: '👌', error: '😢' };
  /** sendVoice plays OGG/Opus as a voice note. */
  readonly voiceFormat = 'ogg_opus' as const;
  private readonly api: TelegramApi;
  private readonly logger: Logger;

  constructor(opts: TelegramEgressOptions) {
    this.logger = opts.logger; // the gateway passes a child already bound to { platform }
    this.api = new TelegramApi({ ...opts, logger: this.logger });
  }

  async send(conversationId: string, markdown: string, opts: SendOptions = {}): Promise<SentMessage> {
    if (markdown.trim() === '') throw new BadRequestError('cannot send an empty message', PLATFORM);
    const target = targetOf(conversationId);
    const chunks: Chunk[] = opts.plain
      ? chunkMessage(markdown, this.maxMessageLength).map((plain) => ({ plain, html: null }))
      : formatChunks(markdown, this.maxMessageLength).map((c: OutgoingChunk) => ({ ...c }));
    const replyTo = opts.replyTo === undefined ? undefined : parseMessageId(opts.replyTo);

    // `idempotencyKey` and `recover` are accepted and ignored: the Bot API has no idempotency key on sendMessage
    // and no way for a bot to list the messages it sent, so a resend after a crash cannot be made safe here
    // (duplicateSafety 'none': the gateway counts the possible duplicate). `onChunkSent` works through the loop.
    const keyboard = opts.buttons?.length ? inlineKeyboard(opts.buttons) : undefined;
    const messageIds = await sendChunks(chunks, opts, async (chunk, i) => {
      const sent = await this.sendChunk(target, chunk, i === 0 ? replyTo : undefined, i === chunks.length - 1 ? keyboard : undefined);
      return String(sent.message_id);
    });
    return { messageIds };
  }

  /** Sends one chunk, stepping down (plain text, no topic, no reply) as Telegram refuses each; `target` remembers a lost topic for the next chunks. */
  private async sendChunk(target: Target, chunk: Chunk, replyTo: number | undefined, keyboard?: InlineKeyboard): Promise<{ message_id: number }> {
    let html = chunk.html;
    let reply = replyTo;
    for (;;) {
      try {
        return await this.api.call('sendMessage', {
          chat_id: target.chatId,
          text: html ?? chunk.plain,
          ...(html !== null && { parse_mode: 'HTML' as const }),
          ...(target.threadId !== undefined && { message_thread_id: target.threadId }),
          ...(reply !== undefined && { reply_parameters: { message_id: reply } }),
          ...(keyboard && { reply_markup: keyboard }),
        });
      } catch (err) {
        if (html !== null && isParseEntitiesError(err)) {
          this.logger.warn({ err: describe(err), chatId: target.chatId }, 'telegram refused our HTML; resending as plain text');
          html = null;
        } else if (target.threadId !== undefined && isThreadNotFound(err)) {
          this.logger.warn({ chatId: target.chatId, threadId: target.threadId }, 'telegram topic is gone; sending to the chat');
          delete target.threadId;
        } else if (reply !== undefined && isReplyNotFound(err)) {
          reply = undefined; // the user deleted the message we answer; the answer still matters
        } else {
          throw toPlatformError(err, 'sendMessage');
        }
      }
    }
  }

  /** sendMessageDraft (Bot API 9.3+): a preview of the text so far; HTML, or plain text when Telegram cannot parse it. */
  async draft(conversationId: string, draftId: number, markdown: string): Promise<void> {
    const target = targetOf(conversationId);
    const [chunk] = formatChunks(markdown, this.maxMessageLength);
    if (chunk === undefined) return;
    const call = (html: boolean): Promise<unknown> =>
      this.api.call(
        'sendMessageDraft' as 'sendMessage',
        {
          chat_id: target.chatId,
          draft_id: draftId,
          text: html && chunk.html !== null ? chunk.html : chunk.plain,
          ...(html && chunk.html !== null && { parse_mode: 'HTML' as const }),
          ...(target.threadId !== undefined && { message_thread_id: target.threadId }),
        } as unknown as Parameters<TelegramApi['call']>[1],
      );
    try {
      await call(true).catch((err: unknown) => {
        if (!isParseEntitiesError(err)) throw err;
        return call(false);
      });
    } catch (err) {
      throw toPlatformError(err, 'sendMessageDraft');
    }
  }

  /** A press is closed with answerCallbackQuery: the note shows as a short toast to the presser alone. */
  async answerInteraction(interaction: InteractionRef, note: string | null): Promise<void> {
    try {
      await this.api.call('answerCallbackQuery', {
        callback_query_id: interaction.id,
        ...(note !== null && { text: note.slice(0, TELEGRAM_CALLBACK_NOTE_MAX) }),
      });
    } catch (err) {
      throw toPlatformError(err, 'answerCallbackQuery');
    }
  }

  /** `idempotencyKey` is ignored, as for text: the Bot API has no idempotency key. */
  async sendFile(conversationId: string, file: OutboundFile, opts: SendFileOptions = {}): Promise<string> {
    const replyTo = opts.replyTo === undefined ? undefined : parseMessageId(opts.replyTo);
    return String(await uploadFile(this.api, this.logger, targetOf(conversationId), file, replyTo));
  }

  async edit(conversationId: string, messageId: string, markdown: string): Promise<void> {
    const { chatId } = telegramCodec.decode(conversationId);
    const id = parseMessageId(messageId);
    const chunks = formatChunks(markdown, this.maxMessageLength);
    if (chunks.length > 1) {
      throw new BadRequestError(`edit text is ${markdown.length} characters; one Telegram message holds ${this.maxMessageLength}`, PLATFORM);
    }
    let html: string | null = chunks[0].html;
    for (;;) {
      try {
        await this.api.call('editMessageText', {
          chat_id: chatId,
          message_id: id,
          text: html ?? chunks[0].plain,
          ...(html !== null && { parse_mode: 'HTML' as const }),
        });
        return;
      } catch (err) {
        // Streaming edits often repeat the last text; Telegram calls that an error, we call it done.
        if (isNotModified(err)) return;
        if (html !== null && isParseEntitiesError(err)) {
          this.logger.warn({ err: describe(err), chatId }, 'telegram refused our HTML in an edit; retrying as plain text');
          html = null;
          continue;
        }
        throw toPlatformError(err, 'editMessageText');
      }
    }
  }

  async typing(conversationId: string): Promise<void> {
    const { chatId, threadId } = telegramCodec.decode(conversationId);
    // Unlike sends, typing in the General topic only shows when thread id 1 is named explicitly.
    let thread = threadId === undefined ? undefined : Number(threadId);
    for (;;) {
      try {
        await this.api.call('sendChatAction', {
          chat_id: chatId,
          action: 'typing',
          ...(thread !== undefined && { message_thread_id: thread }),
        });
        return;
      } catch (err) {
        if (thread !== undefined && isThreadNotFound(err)) {
          thread = undefined;
          continue;
        }
        throw toPlatformError(err, 'sendChatAction');
      }
    }
  }

  async react(conversationId: string, messageId: string, emoji: string, remove = false): Promise<void> {
    const { chatId } = telegramCodec.decode(conversationId);
    try {
      await this.api.call('setMessageReaction', {
        chat_id: chatId,
        message_id: parseMessageId(messageId),
        // Telegram allows a fixed emoji set per chat; anything else comes back as REACTION_INVALID, ignored below.
        reaction: remove ? [] : [{ type: 'emoji', emoji: emoji as TelegramEmoji }],
      });
    } catch (err) {
      if (isReactionRefused(err)) {
        this.logger.debug({ chatId, emoji, err: describe(err) }, 'telegram chat does not take this reaction');
        return;
      }
      throw toPlatformError(err, 'setMessageReaction');
    }
  }
}

/** Where a conversation's messages go: its chat and topic (none for the General topic, which refuses its own id). */
function targetOf(conversationId: string): Target {
  const { chatId, threadId } = telegramCodec.decode(conversationId);
  return { chatId, ...(threadId !== undefined && threadId !== TELEGRAM_GENERAL_TOPIC_ID && { threadId: Number(threadId) }) };
}

/** Accepts the platform message id (`"42"`) or the InboundMessage id form (`"<chat_id>:42"`). */
function parseMessageId(id: string): number {
  const n = Number(id.includes(':') ? id.slice(id.lastIndexOf(':') + 1) : id);
  if (!isMessageId(n)) throw new BadRequestError(`not a Telegram message id: "${id}"`, PLATFORM);
  return n;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
