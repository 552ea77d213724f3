/**
 * Discord egress: REST only (@discordjs/rest, no gateway connection), so any worker process can reply.
 */
import { createHash } from 'node:crypto';
import {
  AllowedMentionsTypes,
  REST,
  Routes,
  type APIAllowedMentions,
  type RESTPostAPIChannelMessageJSONBody,
  type RESTPostAPIChannelMessageResult,
} from 'discord.js';
import { chunkMessage } from '../shared/chunk.js';
import { sendChunks } from '../shared/send-chunks.js';
import { BadRequestError } from '../errors.js';
import type { PlatformEgress, SendOptions, SentMessage } from '../types.js';
import { discordCodec, messageChannelOf, replyChannelOf, type DiscordConversation } from './codec.js';
import {
  DISCORD_API_VERSION,
  DISCORD_DEFAULT_API_URL,
  DISCORD_MAX_INLINE_RATE_LIMIT_MS,
  DISCORD_MAX_MESSAGE_LENGTH,
  DISCORD_NONCE_MAX_LENGTH,
  DISCORD_REQUEST_TIMEOUT_MS,
  DISCORD_TYPING_REFRESH_MS,
  type DiscordEgressOptions,
} from './config.js';
import { formatForDiscord } from './format.js';
import { isReplyReferenceRejection, toPlatformError } from './rest-errors.js';

/** Users may be pinged (the agent addressing someone by mention); @everyone, @here and roles never. */
function allowedMentions(): APIAllowedMentions {
  return { parse: [AllowedMentionsTypes.User], replied_user: true };
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
  const rest = new REST({
    version: DISCORD_API_VERSION,
    api: opts.apiUrl ?? DISCORD_DEFAULT_API_URL,
    timeout: opts.requestTimeoutMs ?? DISCORD_REQUEST_TIMEOUT_MS,
    // The gateway owns retries on network errors; retrying here too would multiply them.
    retries: 0,
    rejectOnRateLimit: (data) => data.retryAfter > maxInline,
  }).setToken(opts.botToken);

  async function call<T>(what: string, request: () => Promise<unknown>): Promise<T> {
    try {
      return (await request()) as T;
    } catch (err) {
      const mapped = toPlatformError(err);
      log.warn({ err: mapped.message, what }, 'discord request failed');
      throw mapped;
    }
  }

  async function post(channelId: string, body: RESTPostAPIChannelMessageJSONBody): Promise<RESTPostAPIChannelMessageResult> {
    return (await rest.post(Routes.channelMessages(channelId), { body })) as RESTPostAPIChannelMessageResult;
  }

  return {
    platform: 'discord',
    maxMessageLength: DISCORD_MAX_MESSAGE_LENGTH,
    // Creates carry a nonce with enforce_nonce: a repeat within Discord's few minutes returns the first message.
    // `recover` needs nothing more here: past that window a resend posts again, and the gateway counts it.
    duplicateSafety: 'idempotent',
    typingRefreshMs: DISCORD_TYPING_REFRESH_MS,

    async send(conversationId: string, markdown: string, sendOpts: SendOptions = {}): Promise<SentMessage> {
      const conv = decodeConversation(conversationId);
      const channelId = replyChannelOf(conv);
      const text = sendOpts.plain ? markdown : formatForDiscord(markdown);
      if (text.trim() === '') throw new BadRequestError('Discord cannot send an empty message', 'discord');
      const chunks = chunkMessage(text, DISCORD_MAX_MESSAGE_LENGTH);
      // The starter message of a thread lives in the parent channel and is shown atop the thread already;
      // Discord cannot reply across channels, so do not try.
      const wanted = sendOpts.replyTo;
      const replyTo = wanted !== undefined && messageChannelOf(conv, wanted) === channelId ? wanted : undefined;

      const { idempotencyKey } = sendOpts;
      const messageIds = await sendChunks(chunks, sendOpts, async (content, i) => {
        const body: RESTPostAPIChannelMessageJSONBody = { content, allowed_mentions: allowedMentions() };
        if (idempotencyKey !== undefined) {
          body.nonce = discordNonce(idempotencyKey, i);
          body.enforce_nonce = true;
        }
        if (i === 0 && replyTo !== undefined) {
          // fail_if_not_exists: false lets Discord send a plain message when the user deleted theirs meanwhile.
          body.message_reference = { message_id: replyTo, fail_if_not_exists: false };
        }
        const what = i > 0 ? `send chunk ${i + 1}/${chunks.length}` : 'send';
        const sent = await call<RESTPostAPIChannelMessageResult>(what, async () => {
          try {
            return await post(channelId, body);
          } catch (err) {
            if (body.message_reference === undefined || !isReplyReferenceRejection(err)) throw err;
            log.info({ channelId, replyTo }, 'discord refused the reply reference; sending without it');
            delete body.message_reference;
            return await post(channelId, body);
          }
        });
        return sent.id;
      });
      return { messageIds };
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

    async react(conversationId: string, messageId: string, emoji: string, remove = false): Promise<void> {
      const conv = decodeConversation(conversationId);
      const custom = CUSTOM_EMOJI_RE.exec(emoji.trim());
      const encoded = encodeURIComponent(custom ? `${custom[1]}:${custom[2]}` : emoji.trim());
      const route = Routes.channelMessageOwnReaction(messageChannelOf(conv, messageId), messageId, encoded);
      await call('react', () => (remove ? rest.delete(route) : rest.put(route)));
    },
  };
}
