/**
 * WhatsApp egress through the Cloud API (Graph REST only, so any worker replies).
 *
 * Free-form messages reach a user only inside the 24-hour customer-service window (since their last message).
 * Known to be closed (ServiceWindowMemory), or closed by Graph's answer (131047): the configured template goes
 * instead, once, or the reply is refused with WindowClosedError (not retried; the gateway logs it).
 * Rate limits (130429, 131056, 80007, 4, HTTP 429) surface as RateLimitedError, which delivery waits out.
 * WhatsApp has no message edits: `edit` refuses, so streaming and progress edits stay off for it.
 */
import type { Logger } from 'pino';
import { BadRequestError, FileTooLargeError } from '../errors.js';
import { chunkMessage } from '../shared/chunk.js';
import { sendChunks } from '../shared/send-chunks.js';
import {
  DEFAULT_STATUS_REACTIONS,
  type OutboundFile,
  type PlatformEgress,
  type SendFileOptions,
  type SendOptions,
  type SentMessage,
  type StatusReactions,
} from '../types.js';
import { whatsappCodec } from './codec.js';
import {
  WHATSAPP_DEFAULT_API_URL,
  WHATSAPP_MAX_CAPTION_LENGTH,
  WHATSAPP_MAX_MESSAGE_LENGTH,
  WHATSAPP_MEDIA_LIMITS,
  WHATSAPP_SERVICE_WINDOW_MS,
  WHATSAPP_TYPING_REFRESH_MS,
  type ServiceWindowMemory,
  type WhatsAppEgressOptions,
  type WindowTemplate,
} from './config.js';
import { markdownToWhatsApp } from './format.js';
import { GraphClient } from './graph.js';
import { WindowClosedError } from './graph-errors.js';
import { fitsInteractive, interactiveMessage, mediaMessage, reactionMessage, readWithTyping, templateMessage, textMessage } from './payloads.js';

/** Images WhatsApp shows as pictures; other image types go as documents. */
const PICTURE_TYPES = new Set(['image/jpeg', 'image/png']);
/** What the short interactive message says when the reply itself is too long to carry the buttons. */
const BUTTONS_PROMPT = 'Choose:';

interface SendAnswer {
  messages?: { id?: unknown }[];
}

export class WhatsAppEgress implements PlatformEgress {
  readonly platform = 'whatsapp' as const;
  readonly maxMessageLength = WHATSAPP_MAX_MESSAGE_LENGTH;
  /** Graph has no idempotency key for messages, and the bot cannot read its sent messages back. */
  readonly duplicateSafety = 'none' as const;
  readonly typingRefreshMs = WHATSAPP_TYPING_REFRESH_MS;
  /** Voice notes are OGG/Opus audio messages. */
  readonly voiceFormat = 'ogg_opus' as const;
  readonly editable = false;
  readonly statusReactions: StatusReactions = DEFAULT_STATUS_REACTIONS;

  private readonly graph: GraphClient;
  private readonly logger: Logger;
  private readonly window: ServiceWindowMemory;
  private readonly phoneNumberId: string;
  private readonly template: WindowTemplate | undefined;

  constructor(opts: WhatsAppEgressOptions) {
    this.graph = new GraphClient({ apiUrl: opts.apiUrl ?? WHATSAPP_DEFAULT_API_URL, accessToken: opts.accessToken, timeoutMs: opts.timeoutMs });
    this.logger = opts.logger;
    this.window = opts.window;
    this.phoneNumberId = opts.phoneNumberId;
    this.template = opts.template;
  }

  async send(conversationId: string, markdown: string, opts: SendOptions = {}): Promise<SentMessage> {
    const { waId } = whatsappCodec.decode(conversationId);
    if (await this.windowClosed(waId)) return { messageIds: [await this.outsideWindow(waId, 'known closed')] };
    const text = opts.plain ? markdown : markdownToWhatsApp(markdown);
    const chunks = chunkMessage(text, WHATSAPP_MAX_MESSAGE_LENGTH);
    const buttons = opts.buttons?.length ? opts.buttons : undefined;
    try {
      const messageIds = await sendChunks(chunks, opts, async (chunk, i) => {
        const replyTo = i === 0 ? opts.replyTo : undefined;
        if (i < chunks.length - 1 || !buttons) return this.post('send message', textMessage(waId, chunk, replyTo));
        if (fitsInteractive(chunk)) return this.post('send buttons', interactiveMessage(waId, chunk, buttons, replyTo));
        // Too long to carry buttons: the text, then the buttons under a short prompt (reported as one chunk).
        await this.post('send message', textMessage(waId, chunk, replyTo));
        return this.post('send buttons', interactiveMessage(waId, BUTTONS_PROMPT, buttons));
      });
      return { messageIds };
    } catch (err) {
      if (!(err instanceof WindowClosedError) || err.sentIds.length > 0) throw err;
      return { messageIds: [await this.outsideWindow(waId, 'closed (Graph 131047)')] };
    }
  }

  async edit(): Promise<void> {
    throw new BadRequestError('whatsapp messages cannot be edited', 'whatsapp');
  }

  /** Read receipt and "typing…" on the user's last message (the Cloud API shows typing only in answer to one). */
  async typing(conversationId: string): Promise<void> {
    const { waId } = whatsappCodec.decode(conversationId);
    const last = await this.window.last(this.phoneNumberId, waId);
    if (last === null) return;
    await this.graph.post('typing indicator', `/${this.phoneNumberId}/messages`, readWithTyping(last.messageId));
  }

  async react(conversationId: string, messageId: string, emoji: string, remove = false): Promise<void> {
    const { waId } = whatsappCodec.decode(conversationId);
    await this.post('reaction', reactionMessage(waId, messageId, remove ? '' : emoji));
  }

  async sendFile(conversationId: string, file: OutboundFile, opts: SendFileOptions = {}): Promise<string> {
    const { waId } = whatsappCodec.decode(conversationId);
    if (await this.windowClosed(waId)) throw new WindowClosedError('whatsapp: the 24-hour window is closed; files cannot be sent', 'whatsapp');
    const type = file.kind === 'voice' || file.kind === 'audio' ? 'audio' : file.kind === 'image' && PICTURE_TYPES.has(file.mimeType) ? 'image' : 'document';
    const limit = WHATSAPP_MEDIA_LIMITS[type];
    if (file.data.length > limit) {
      throw new FileTooLargeError(`whatsapp ${type} is larger than ${limit} bytes`, 'whatsapp', limit, { size: file.data.length });
    }
    const mediaId = await this.graph.upload(this.phoneNumberId, { data: file.data, mimeType: file.mimeType, name: file.name });
    // Audio messages carry no caption.
    const caption = type === 'audio' || !file.caption ? undefined : [...file.caption].slice(0, WHATSAPP_MAX_CAPTION_LENGTH).join('');
    const extra = { ...(caption && { caption }), ...(type === 'document' && { filename: file.name }) };
    return this.post(`send ${type}`, mediaMessage(waId, type, mediaId, extra, opts.replyTo));
  }

  private async post(what: string, body: Record<string, unknown>): Promise<string> {
    const res = await this.graph.post<SendAnswer>(what, `/${this.phoneNumberId}/messages`, body);
    const id = res.messages?.[0]?.id;
    if (typeof id !== 'string') throw new BadRequestError(`whatsapp ${what}: answer without a message id`, 'whatsapp');
    return id;
  }

  private async windowClosed(waId: string): Promise<boolean> {
    const last = await this.window.last(this.phoneNumberId, waId);
    // Unknown (never seen here, or forgotten): Graph decides, and says 131047 if it is closed.
    return last !== null && Date.now() - last.at >= WHATSAPP_SERVICE_WINDOW_MS;
  }

  /** The window is closed: the template, or a clear refusal. */
  private async outsideWindow(waId: string, why: string): Promise<string> {
    if (!this.template) {
      this.logger.warn({ why }, 'whatsapp: the 24-hour window is closed and no template is set (WHATSAPP_WINDOW_TEMPLATE); reply not sent');
      throw new WindowClosedError('whatsapp: the 24-hour customer-service window is closed and no template is configured', 'whatsapp');
    }
    this.logger.info({ why, template: this.template.name }, 'whatsapp: the 24-hour window is closed; sending the template instead of the reply');
    return this.post('send template', templateMessage(waId, this.template));
  }
}
