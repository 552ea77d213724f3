/**
 * Discord egress: REST only (@discordjs/rest, no gateway connection), so any worker process can reply. The bot's
 * one REST client (rest.ts) is shared with its file downloads.
 */
import { MessageFlags, Routes, type REST, type RawFile, type RESTPostAPIChannelMessageJSONBody, type RESTPostAPIChannelMessageResult } from 'discord.js';
import type { Logger } from 'pino';
import { chunkMessage } from '../shared/chunk.js';
import { sendChunks } from '../shared/send-chunks.js';
import { BadRequestError } from '../errors.js';
import {
  DEFAULT_STATUS_REACTIONS,
  type InteractionRef,
  type InteractionTarget,
  type OutboundFile,
  type PlatformEgress,
  type SendFileOptions,
  type SendOptions,
  type SentMessage,
  type StatusReactions,
} from '../types.js';
import { messageChannelOf, replyChannelOf, type DiscordConversation } from './codec.js';
import { DISCORD_MAX_MESSAGE_LENGTH, DISCORD_TYPING_REFRESH_MS, type DiscordEgressOptions } from './config.js';
import { formatForDiscord } from './format.js';
import { allowedMentions, decodeConversation, discordComponents, discordNonce, reactionEmoji } from './message-parts.js';
import { createDiscordRest } from './rest.js';
import { isReplyReferenceRejection, toPlatformError } from './rest-errors.js';

export function createDiscordEgress(opts: DiscordEgressOptions): PlatformEgress {
  return new DiscordEgress(opts);
}

export class DiscordEgress implements PlatformEgress {
  readonly platform = 'discord' as const;
  readonly maxMessageLength = DISCORD_MAX_MESSAGE_LENGTH;
  // Creates carry a nonce with enforce_nonce: a repeat within Discord's few minutes returns the first message.
  // `recover` needs nothing more here: past that window a resend posts again, and the gateway counts it.
  readonly duplicateSafety = 'idempotent' as const;
  readonly typingRefreshMs = DISCORD_TYPING_REFRESH_MS;
  readonly statusReactions: StatusReactions = DEFAULT_STATUS_REACTIONS;
  // Voice replies go as an MP3 attachment: Discord's own voice messages need a waveform and flags bots rarely get right.
  readonly voiceFormat = 'mp3' as const;
  private readonly log: Logger;
  private readonly rest: REST;

  constructor(opts: DiscordEgressOptions) {
    this.log = opts.logger.child({ platform: 'discord', part: 'egress' });
    this.rest = opts.rest ?? createDiscordRest(opts);
  }

  async send(conversationId: string, markdown: string, sendOpts: SendOptions = {}): Promise<SentMessage> {
    const conv = decodeConversation(conversationId);
    const channelId = replyChannelOf(conv);
    const text = sendOpts.plain ? markdown : formatForDiscord(markdown);
    if (text.trim() === '') throw new BadRequestError('Discord cannot send an empty message', 'discord');
    const chunks = chunkMessage(text, DISCORD_MAX_MESSAGE_LENGTH);
    const replyTo = replyTarget(conv, channelId, sendOpts.replyTo);

    const { idempotencyKey } = sendOpts;
    const messageIds = await sendChunks(chunks, sendOpts, async (content, i) => {
      const body: RESTPostAPIChannelMessageJSONBody = { content, allowed_mentions: allowedMentions() };
      if (idempotencyKey !== undefined) {
        body.nonce = discordNonce(idempotencyKey, i);
        body.enforce_nonce = true;
      }
      if (i === chunks.length - 1 && sendOpts.buttons?.length)
        body.components = discordComponents(sendOpts.buttons) as unknown as RESTPostAPIChannelMessageJSONBody['components'];
      if (i === 0 && replyTo !== undefined) {
        // fail_if_not_exists: false lets Discord send a plain message when the user deleted theirs meanwhile.
        body.message_reference = { message_id: replyTo, fail_if_not_exists: false };
      }
      return this.create(i > 0 ? `send chunk ${i + 1}/${chunks.length}` : 'send', channelId, body);
    });
    return { messageIds };
  }

  /** A message with the file as its one attachment (multipart: `payload_json` + `files[0]`); the caption is its text. */
  async sendFile(conversationId: string, file: OutboundFile, fileOpts: SendFileOptions = {}): Promise<string> {
    const conv = decodeConversation(conversationId);
    const channelId = replyChannelOf(conv);
    const caption = file.caption?.trim() ? formatForDiscord(file.caption.trim()).slice(0, DISCORD_MAX_MESSAGE_LENGTH) : undefined;
    const body: RESTPostAPIChannelMessageJSONBody = {
      attachments: [{ id: 0, filename: file.name }],
      allowed_mentions: allowedMentions(),
      ...(caption !== undefined && { content: caption }),
    };
    if (fileOpts.idempotencyKey !== undefined) {
      body.nonce = discordNonce(fileOpts.idempotencyKey, 0);
      body.enforce_nonce = true;
    }
    const replyTo = replyTarget(conv, channelId, fileOpts.replyTo);
    if (replyTo !== undefined) body.message_reference = { message_id: replyTo, fail_if_not_exists: false };
    return this.create('upload', channelId, body, [{ name: file.name, data: file.data, contentType: file.mimeType }]);
  }

  async edit(conversationId: string, messageId: string, markdown: string): Promise<void> {
    const conv = decodeConversation(conversationId);
    const content = formatForDiscord(markdown);
    if (content.length > DISCORD_MAX_MESSAGE_LENGTH) {
      throw new BadRequestError(
        `Discord edit is ${content.length} characters; the limit is ${DISCORD_MAX_MESSAGE_LENGTH} ` + '(send the rest as a new message)',
        'discord',
      );
    }
    if (content.trim() === '') throw new BadRequestError('Discord cannot edit a message to be empty', 'discord');
    await this.call('edit', () =>
      this.rest.patch(Routes.channelMessage(messageChannelOf(conv, messageId), messageId), {
        body: { content, allowed_mentions: allowedMentions() },
      }),
    );
  }

  async typing(conversationId: string): Promise<void> {
    const conv = decodeConversation(conversationId);
    await this.call('typing', () => this.rest.post(Routes.channelTyping(replyChannelOf(conv))));
  }

  /**
   * The deferred response (PATCH @original) takes the first chunk; the rest follow up (POST to the interaction's
   * webhook) with the same visibility. The interaction token authorises these: no bot token is sent.
   */
  async answerInteraction(interaction: InteractionRef, markdown: string | null, where: InteractionTarget): Promise<void> {
    const { applicationId, token } = interaction;
    if (applicationId === undefined || token === undefined) throw new BadRequestError('not a Discord interaction', 'discord');
    // A press was acknowledged with a deferred update already: it needs nothing more unless there is a note.
    if (markdown === null) return;
    const text = formatForDiscord(markdown);
    if (text.trim() === '') throw new BadRequestError('Discord cannot send an empty message', 'discord');
    const chunks = chunkMessage(text, DISCORD_MAX_MESSAGE_LENGTH);
    const components = (i: number): Record<string, unknown> =>
      i === chunks.length - 1 && where.buttons?.length ? { components: discordComponents(where.buttons) } : {};
    // A command's deferred response takes the first chunk; a press's note (and further chunks) are follow-ups.
    const followFrom = interaction.kind === 'command' ? 1 : 0;
    if (interaction.kind === 'command') {
      await this.call('answer interaction', () =>
        this.rest.patch(Routes.webhookMessage(applicationId, token, '@original'), {
          body: { content: chunks[0], allowed_mentions: allowedMentions(), ...components(0) },
          auth: false,
        }),
      );
    }
    for (let i = followFrom; i < chunks.length; i++) {
      const flags = interaction.ephemeral ? MessageFlags.Ephemeral : undefined;
      await this.call('interaction follow-up', () =>
        this.rest.post(Routes.webhook(applicationId, token), {
          body: { content: chunks[i], allowed_mentions: allowedMentions(), flags, ...components(i) },
          auth: false,
        }),
      );
    }
  }

  async react(conversationId: string, messageId: string, emoji: string, remove = false): Promise<void> {
    const conv = decodeConversation(conversationId);
    const route = Routes.channelMessageOwnReaction(messageChannelOf(conv, messageId), messageId, reactionEmoji(emoji));
    await this.call('react', () => (remove ? this.rest.delete(route) : this.rest.put(route)));
  }

  private async call<T>(what: string, request: () => Promise<unknown>): Promise<T> {
    try {
      return (await request()) as T;
    } catch (err) {
      const mapped = toPlatformError(err);
      this.log.warn({ err: mapped.message, what }, 'discord request failed');
      throw mapped;
    }
  }

  private async post(channelId: string, body: RESTPostAPIChannelMessageJSONBody, files?: RawFile[]): Promise<RESTPostAPIChannelMessageResult> {
    return (await this.rest.post(Routes.channelMessages(channelId), { body, ...(files && { files }) })) as RESTPostAPIChannelMessageResult;
  }

  /** Creates a message (multipart when `files` are given); a refused reply reference is dropped and the create tried once more. */
  private async create(what: string, channelId: string, body: RESTPostAPIChannelMessageJSONBody, files?: RawFile[]): Promise<string> {
    const sent = await this.call<RESTPostAPIChannelMessageResult>(what, async () => {
      try {
        return await this.post(channelId, body, files);
      } catch (err) {
        if (body.message_reference === undefined || !isReplyReferenceRejection(err)) throw err;
        this.log.info({ channelId, replyTo: body.message_reference.message_id }, 'discord refused the reply reference; sending without it');
        delete body.message_reference;
        return await this.post(channelId, body, files);
      }
    });
    return sent.id;
  }
}

/** The message to reply to, when Discord can: the starter of a thread lives in the parent channel, and replies cannot cross channels. */
function replyTarget(conv: DiscordConversation, channelId: string, wanted: string | undefined): string | undefined {
  return wanted !== undefined && messageChannelOf(conv, wanted) === channelId ? wanted : undefined;
}
