/**
 * Matrix egress through the client-server API (REST only, so any worker replies).
 *
 * Every send is a `PUT /rooms/{room}/send/{type}/{txnId}`: the homeserver answers a repeated txnId with the first
 * event, so a reply's chunks carry txnIds derived from the turn (SendOptions.idempotencyKey) and a retried send after
 * a rate limit or a lost answer never posts twice. `M_LIMIT_EXCEEDED` surfaces as RateLimitedError, which delivery
 * (the one retry owner) waits out. Edits are `m.replace` events (streamed previews, tool progress).
 */
import { createHash, randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../errors.js';
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
import { MatrixClient, Method, seg } from './client.js';
import { matrixCodec } from './codec.js';
import { MATRIX_MAX_MESSAGE_LENGTH, MATRIX_TYPING_REFRESH_MS, MATRIX_TYPING_TIMEOUT_MS, type MatrixEgressOptions } from './config.js';
import { editContent, fileContent, placed, reactionContent, textContent, withButtons } from './content.js';

/** A caption longer than this goes without its tail (clients show captions as a short text under the file). */
const MAX_CAPTION_LENGTH = 1_024;

/** Our reaction events remembered to take back (per process). */
const MAX_REMEMBERED_REACTIONS = 1_000;

const digest = (...parts: string[]): string => createHash('sha256').update(parts.join('\0')).digest('base64url').slice(0, 32);

export class MatrixEgress implements PlatformEgress {
  readonly platform = 'matrix' as const;
  readonly maxMessageLength = MATRIX_MAX_MESSAGE_LENGTH;
  /** A repeated txnId returns the first event (per access token, for as long as the homeserver keeps it). */
  readonly duplicateSafety = 'idempotent' as const;
  readonly typingRefreshMs = MATRIX_TYPING_REFRESH_MS;
  /** Element and other clients play OGG/Opus `m.audio` voice messages. */
  readonly voiceFormat = 'ogg_opus' as const;
  readonly statusReactions: StatusReactions = DEFAULT_STATUS_REACTIONS;

  private readonly client: MatrixClient;
  private readonly timeoutMs: number | undefined;
  /** Our reaction events by room, message and emoji, to take one back (redact it). */
  private readonly reactions = new Map<string, string>();

  constructor(opts: MatrixEgressOptions, client?: MatrixClient) {
    this.client = client ?? new MatrixClient(opts);
    this.timeoutMs = opts.timeoutMs;
  }

  async send(conversationId: string, markdown: string, opts: SendOptions = {}): Promise<SentMessage> {
    const { roomId, threadRoot } = matrixCodec.decode(conversationId);
    const chunks = chunkMessage(markdown, MATRIX_MAX_MESSAGE_LENGTH);
    const buttons = opts.buttons?.length ? opts.buttons : undefined;
    const key = opts.idempotencyKey;
    const messageIds = await sendChunks(chunks, opts, async (chunk, i) => {
      let content = placed(textContent(chunk, opts.plain === true), { threadRoot, replyTo: i === 0 ? opts.replyTo : undefined });
      if (buttons && i === chunks.length - 1) content = withButtons(content, buttons);
      const txnId = key ? `hr-${digest(key, roomId)}-${i}` : `hm-${randomUUID()}`;
      return this.sendEvent('send message', roomId, 'm.room.message', content, txnId);
    });
    return { messageIds };
  }

  async edit(conversationId: string, messageId: string, markdown: string): Promise<void> {
    const { roomId } = matrixCodec.decode(conversationId);
    const text = markdown.length > MATRIX_MAX_MESSAGE_LENGTH ? `${markdown.slice(0, MATRIX_MAX_MESSAGE_LENGTH - 1)}…` : markdown;
    // Each edit is a new event; the same text twice is harmless (clients show the latest).
    await this.sendEvent('edit message', roomId, 'm.room.message', editContent(messageId, text), `he-${randomUUID()}`);
  }

  async typing(conversationId: string): Promise<void> {
    const { roomId } = matrixCodec.decode(conversationId);
    await this.client.call('typing', Method.Put, `/rooms/${seg(roomId)}/typing/${seg(this.client.userId)}`, {
      body: { typing: true, timeout: MATRIX_TYPING_TIMEOUT_MS },
      timeoutMs: this.timeoutMs,
    });
  }

  async react(conversationId: string, messageId: string, emoji: string, remove = false): Promise<void> {
    const { roomId } = matrixCodec.decode(conversationId);
    const key = digest(roomId, messageId, emoji);
    // The same txnId for the same reaction: a retried add is one reaction, and a take-back finds its event.
    const addTxn = `hx-${key}`;
    if (!remove) {
      this.reactions.set(key, await this.sendEvent('reaction', roomId, 'm.reaction', reactionContent(messageId, emoji), addTxn));
      // Reactions never taken back (✅) are forgotten oldest first; a forgotten one is found again by its txnId.
      if (this.reactions.size > MAX_REMEMBERED_REACTIONS) this.reactions.delete(this.reactions.keys().next().value as string);
      return;
    }
    // Added by another process (the ingress marks a waiting message): the same txnId again answers with its event.
    const eventId = this.reactions.get(key) ?? (await this.sendEvent('reaction', roomId, 'm.reaction', reactionContent(messageId, emoji), addTxn));
    this.reactions.delete(key);
    try {
      await this.client.call('redact reaction', Method.Put, `/rooms/${seg(roomId)}/redact/${seg(eventId)}/${seg(`hy-${key}`)}`, {
        body: {},
        timeoutMs: this.timeoutMs,
      });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  async sendFile(conversationId: string, file: OutboundFile, opts: SendFileOptions = {}): Promise<string> {
    const { roomId, threadRoot } = matrixCodec.decode(conversationId);
    const mxc = await this.upload(file);
    const caption = file.caption ? [...file.caption].slice(0, MAX_CAPTION_LENGTH).join('') : undefined;
    const content = placed(fileContent(file, mxc, caption), { threadRoot, replyTo: opts.replyTo });
    const txnId = opts.idempotencyKey ? `hf-${digest(opts.idempotencyKey, roomId, file.name)}` : `hf-${randomUUID()}`;
    return this.sendEvent(`send ${String(content.msgtype)}`, roomId, 'm.room.message', content, txnId);
  }

  /** `POST /_matrix/media/v3/upload`: the bytes once, their `mxc://` URI back. Too large: FileTooLargeError (413). */
  private async upload(file: OutboundFile): Promise<string> {
    const res = await this.client.call<{ content_uri?: unknown }>('media upload', Method.Post, '/upload', {
      prefix: 'media',
      query: { filename: file.name },
      body: file.data,
      contentType: file.mimeType,
      timeoutMs: this.timeoutMs,
    });
    if (typeof res.content_uri !== 'string' || !res.content_uri.startsWith('mxc://'))
      throw new BadRequestError('matrix media upload: answer without a content_uri', 'matrix');
    return res.content_uri;
  }

  private async sendEvent(what: string, roomId: string, type: string, content: Record<string, unknown>, txnId: string): Promise<string> {
    const path = `/rooms/${seg(roomId)}/send/${seg(type)}/${seg(txnId)}`;
    const res = await this.client.call<{ event_id?: unknown }>(what, Method.Put, path, { body: content, timeoutMs: this.timeoutMs });
    if (typeof res.event_id !== 'string') throw new BadRequestError(`matrix ${what}: answer without an event_id`, 'matrix');
    return res.event_id;
  }
}
