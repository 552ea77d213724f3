/**
 * Discord egress: REST only (@discordjs/rest, no gateway connection), so any worker process can reply.
 */
import { createHash } from 'node:crypto';
import {
  AllowedMentionsTypes,
  MessageFlags,
  REST,
  Routes,
  type RawFile,
  type APIAllowedMentions,
  type RESTPostAPIChannelMessageJSONBody,
  type RESTPostAPIChannelMessageResult,
} from 'discord.js';
import { chunkMessage } from '../shared/chunk.js';
import { sendChunks } from '../shared/send-chunks.js';
import { BadRequestError } from '../errors.js';
import type { Button, InteractionRef, InteractionTarget, OutboundFile, PlatformEgress, SendFileOptions, SendOptions, SentMessage } from '../types.js';
import { discordCodec, messageChannelOf, replyChannelOf, type DiscordConversation } from './codec.js';
import {
  DISCORD_API_VERSION,
  DISCORD_DEFAULT_API_URL,
  DISCORD_MAX_INLINE_RATE_LIMIT_MS,
  DISCORD_MAX_MESSAGE_LENGTH,
  DISCORD_NONCE_MAX_LENGTH,
  DISCORD_REQUEST_TIMEOUT_MS,
  DISCORD_TYPING_REFRESH_MS,
  DISCORD_UPLOAD_TIMEOUT_MS,
  type DiscordEgressOptions,
} from './config.js';
import { formatForDiscord } from './format.js';
import { isReplyReferenceRejection, toPlatformError } from './rest-errors.js';

/** Users may be pinged (the agent addressing someone by mention); @everyone, @here and roles never. */
function allowedMentions(): APIAllowedMentions {
  return { parse: [AllowedMentionsTypes.User], replied_user: true };
}

/** Discord: 5 buttons per action row, 5 rows per message, labels up to 80 characters. */
const BUTTONS_PER_ROW = 5;
const MAX_ROWS = 5;
const BUTTON_LABEL_MAX = 80;
const BUTTON_STYLE_SECONDARY = 2;

/** Action rows of buttons whose `custom_id` is the button's data. */
export function discordComponents(buttons: readonly Button[]): Array<{ type: 1; components: Array<Record<string, unknown>> }> {
  const rows: Array<{ type: 1; components: Array<Record<string, unknown>> }> = [];
  for (let i = 0; i < buttons.length && rows.length < MAX_ROWS; i += BUTTONS_PER_ROW) {
    rows.push({
      type: 1,
      components: buttons.slice(i, i + BUTTONS_PER_ROW).map((b) => ({
        type: 2,
        style: BUTTON_STYLE_SECONDARY,
        label: b.label.length <= BUTTON_LABEL_MAX ? b.label : `${b.label.slice(0, BUTTON_LABEL_MAX - 1)}…`,
        custom_id: b.data,
      })),
    });
  }
  return rows;
}

/** A custom emoji as written in a message, `<:name:id>` or `<a:name:id>`; the reaction route wants `name:id`. */
const CUSTOM_EMOJI_RE = /^<a?:(\w+):(\d+)>$/;

/**
 * The nonce of one chunk of one reply: the same key and index always give the same nonce, so a resend after a
 * crash is answered with the message the first attempt created. 25 base64url characters of SHA-256 (150 bits).
 */
export function discordNonce(idempotencyKey: string, chunkIndex: number): string {
  return createHash('sha256').update(`${idempotencyKey}:${chunkIndex}`).digest('base64url').slice(0, DISCORD_NONCE_MAX_LENGTH);
}

/** A conversation id that is not Discord's is the caller's mistake: BadRequestError, never retried. */
function decodeConversation(conversationId: string): DiscordConversation {
  try {
    return discordCodec.decode(conversationId);
  } catch (err) {
    throw new BadRequestError(err instanceof Error ? err.message : String(err), 'discord', { cause: err });
  }
}

export function createDiscordEgress(opts: DiscordEgressOptions): PlatformEgress {
  const log = opts.logger.child({ platform: 'discord', part: 'egress' });
  const maxInline = opts.maxInlineRateLimitMs ?? DISCORD_MAX_INLINE_RATE_LIMIT_MS;
  const client = (timeout: number): REST =>
    new REST({
      version: DISCORD_API_VERSION,
      api: opts.apiUrl ?? DISCORD_DEFAULT_API_URL,
      timeout,
      // The gateway owns retries on network errors; retrying here too would multiply them.
      retries: 0,
      rejectOnRateLimit: (data) => data.retryAfter > maxInline,
    }).setToken(opts.botToken);
  const rest = client(opts.requestTimeoutMs ?? DISCORD_REQUEST_TIMEOUT_MS);
  // Uploads get a client of their own: @discordjs/rest has one timeout per client, and megabytes take longer.
  const uploads = client(DISCORD_UPLOAD_TIMEOUT_MS);

  async function call<T>(what: string, request: () => Promise<unknown>): Promise<T> {
    try {
      return (await request()) as T;
    } catch (err) {
      const mapped = toPlatformError(err);
      log.warn({ err: mapped.message, what }, 'discord request failed');
      throw mapped;
    }
  }

  async function post(channelId: string, body: RESTPostAPIChannelMessageJSONBody, files?: RawFile[]): Promise<RESTPostAPIChannelMessageResult> {
    const via = files ? uploads : rest;
    return (await via.post(Routes.channelMessages(channelId), { body, ...(files && { files }) })) as RESTPostAPIChannelMessageResult;
  }

  /** Creates a message (multipart when `files` are given); a refused reply reference is dropped and the create tried once more. */
  async function create(what: string, channelId: string, body: RESTPostAPIChannelMessageJSONBody, files?: RawFile[]): Promise<string> {
    const sent = await call<RESTPostAPIChannelMessageResult>(what, async () => {
      try {
        return await post(channelId, body, files);
      } catch (err) {
        if (body.message_reference === undefined || !isReplyReferenceRejection(err)) throw err;
        log.info({ channelId, replyTo: body.message_reference.message_id }, 'discord refused the reply reference; sending without it');
        delete body.message_reference;
        return await post(channelId, body, files);
      }
    });
    return sent.id;
  }

  /** The message to reply to, when Discord can: the starter of a thread lives in the parent channel, and replies cannot cross channels. */
  function replyTarget(conv: DiscordConversation, channelId: string, wanted: string | undefined): string | undefined {
    return wanted !== undefined && messageChannelOf(conv, wanted) === channelId ? wanted : undefined;
  }

  return {
    platform: 'discord',
    maxMessageLength: DISCORD_MAX_MESSAGE_LENGTH,
    // Creates carry a nonce with enforce_nonce: a repeat within Discord's few minutes returns the first message.
    // `recover` needs nothing more here: past that window a resend posts again, and the gateway counts it.
    duplicateSafety: 'idempotent',
    typingRefreshMs: DISCORD_TYPING_REFRESH_MS,
    statusReactions: { queued: '👀', tools: '⚙️', done: '✅', error: '⚠️' },
    // Voice replies go as an MP3 attachment: Discord's own voice messages need a waveform and flags bots rarely get right.
    voiceFormat: 'mp3',

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
        if (i === chunks.length - 1 && sendOpts.buttons?.length) body.components = discordComponents(sendOpts.buttons) as unknown as RESTPostAPIChannelMessageJSONBody['components'];
        if (i === 0 && replyTo !== undefined) {
          // fail_if_not_exists: false lets Discord send a plain message when the user deleted theirs meanwhile.
          body.message_reference = { message_id: replyTo, fail_if_not_exists: false };
        }
        return create(i > 0 ? `send chunk ${i + 1}/${chunks.length}` : 'send', channelId, body);
      });
      return { messageIds };
    },

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
      return create('upload', channelId, body, [{ name: file.name, data: file.data, contentType: file.mimeType }]);
    },

    async edit(conversationId: string, messageId: string, markdown: string): Promise<void> {
      const conv = decodeConversation(conversationId);
      const content = formatForDiscord(markdown);
      if (content.length > DISCORD_MAX_MESSAGE_LENGTH) {
        throw new BadRequestError(
          `Discord edit is ${content.length} characters; the limit is ${DISCORD_MAX_MESSAGE_LENGTH} ` +
            '(send the rest as a new message)',
          'discord',
        );
      }
      if (content.trim() === '') throw new BadRequestError('Discord cannot edit a message to be empty', 'discord');
      await call('edit', () =>
        rest.patch(Routes.channelMessage(messageChannelOf(conv, messageId), messageId), {
          body: { content, allowed_mentions: allowedMentions() },
        }),
      );
    },

    async typing(conversationId: string): Promise<void> {
      const conv = decodeConversation(conversationId);
      await call('typing', () => rest.post(Routes.channelTyping(replyChannelOf(conv))));
    },

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
        await call('answer interaction', () =>
          rest.patch(Routes.webhookMessage(applicationId, token, '@original'), {
            body: { content: chunks[0], allowed_mentions: allowedMentions(), ...components(0) },
            auth: false,
          }),
        );
      }
      for (let i = followFrom; i < chunks.length; i++) {
        const flags = interaction.ephemeral ? MessageFlags.Ephemeral : undefined;
        await call('interaction follow-up', () =>
          rest.post(Routes.webhook(applicationId, token), {
            body: { content: chunks[i], allowed_mentions: allowedMentions(), flags, ...components(i) },
            auth: false,
          }),
        );
      }
    },

    async react(conversationId: string, messageId: string, emoji: string, remove = false): Promise<void> {
      const conv = decodeConversation(conversationId);
      const custom = CUSTOM_EMOJI_RE.exec(emoji.trim());
      const encoded = encodeURIComponent(custom ? `${custom[1]}:${custom[2]}` : emoji.trim());
      const route = Routes.channelMessageOwnReaction(messageChannelOf(conv, messageId), messageId, encoded);
      await call('react', () => (remove ? rest.delete(route) : rest.put(route)));
    },
  };
}
