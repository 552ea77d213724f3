/**
 * Slack egress through the Web API only (`WebClient`, no Bolt App), so any worker process can reply.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebClient } from '@slack/web-api';
import type { Logger } from 'pino';
import { FormattingError, NetworkError, RateLimitedError } from '../errors.js';
import { chunkMessage } from '../shared/chunk.js';
import { sendChunks } from '../shared/send-chunks.js';
import {
  DEFAULT_STATUS_REACTIONS,
  type InteractionRef,
  type InteractionTarget,
  type OutboundFile,
  type PlatformEgress,
  type SendOptions,
  type SentMessage,
  type StatusReactions,
} from '../types.js';
import { blocksWithButtons } from './blocks.js';
import { homeView } from './home.js';
import { slackCodec } from './codec.js';
import {
  SLACK_MAX_INLINE_RETRY_WAIT_MS,
  SLACK_MAX_MESSAGE_LENGTH,
  SLACK_RATE_LIMIT_RETRIES,
  SLACK_RECOVER_MAX_PAGES,
  SLACK_RECOVER_PAGE_SIZE,
  SLACK_TYPING_REFRESH_MS,
  SLACK_TYPING_STATUS,
  type SlackEgressOptions,
} from './config.js';
import { markdownToMrkdwn } from './format.js';
import { collectChunks, lookbackOldest, replyMetadata, type HistoryMessage } from './recover.js';
import { slackErrorCode, toPlatformError } from './slack-errors.js';
import { createSlackClient } from './client.js';

/** Answers that mean "this app may not set a thread status here" — remembered, typing is then skipped. */
const STATUS_UNAVAILABLE = new Set([
  'missing_scope',
  'not_allowed',
  'not_allowed_token_type',
  'access_denied',
  'no_permission',
  'unknown_method',
  'method_deprecated',
  'feature_not_enabled',
]);

/** What models and the gateway use → Slack's emoji names. Anything else is passed through (colons stripped). */
const EMOJI_NAMES: Record<string, string> = {
  '👀': 'eyes',
  '✅': 'white_check_mark',
  '✔️': 'heavy_check_mark',
  '❌': 'x',
  '👍': '+1',
  '👎': '-1',
  '⏳': 'hourglass_flowing_sand',
  '⌛': 'hourglass',
  '🤔': 'thinking_face',
  '💭': 'thought_balloon',
  '⚠️': 'warning',
  '⚙️': 'gear',
  '🛑': 'octagonal_sign',
  '🔥': 'fire',
  '🎉': 'tada',
  '❤️': 'heart',
  '🙏': 'pray',
  '👋': 'wave',
  '🔄': 'arrows_counterclockwise',
};

export function slackEmojiName(emoji: string): string {
  const trimmed = emoji.trim();
  return EMOJI_NAMES[trimmed] ?? EMOJI_NAMES[trimmed.replace(/\uFE0F/g, '')] ?? trimmed.replace(/^:|:$/g, '');
}

export interface SlackEgress extends PlatformEgress {
  /** True once Slack said this app may not set thread statuses; typing() is then a no-op. */
  readonly typingDisabled: boolean;
}

export function createSlackEgress(opts: SlackEgressOptions): SlackEgress {
  return new SlackEgressImpl(opts);
}

class SlackEgressImpl implements SlackEgress {
  readonly platform = 'slack' as const;
  readonly maxMessageLength = SLACK_MAX_MESSAGE_LENGTH;
  /** Chunks carry the idempotency key in their metadata; `recover` reads the bot's recent messages for it. */
  readonly duplicateSafety = 'detectable' as const;
  readonly typingRefreshMs = SLACK_TYPING_REFRESH_MS;
  readonly statusReactions: StatusReactions = DEFAULT_STATUS_REACTIONS;
  /** Voice replies go as an MP3 file, which Slack plays inline. */
  readonly voiceFormat = 'mp3' as const;
  typingDisabled = false;

  private readonly client: WebClient;
  private readonly logger: Logger;
  private readonly retries: number;
  private readonly maxWaitMs: number;
  private readonly status: string;

  constructor(opts: SlackEgressOptions) {
    this.logger = opts.logger.child({ platform: 'slack' });
    // We honour Retry-After ourselves (bounded), and delivery owns retries of network errors (client.ts).
    this.client = opts.client ?? createSlackClient({ ...opts, logger: this.logger });
    this.retries = opts.rateLimitRetries ?? SLACK_RATE_LIMIT_RETRIES;
    this.maxWaitMs = opts.maxInlineRetryWaitMs ?? SLACK_MAX_INLINE_RETRY_WAIT_MS;
    this.status = opts.typingStatus ?? SLACK_TYPING_STATUS;
  }

  async send(conversationId: string, markdown: string, opts: SendOptions = {}): Promise<SentMessage> {
    // Replies follow the conversation: its thread, or a DM's top level. `replyTo` is not used, because
    // answering a top-level DM inside a thread would move the user into a different conversation.
    const { channel, threadTs } = slackCodec.decode(conversationId);
    const text = opts.plain ? markdown : markdownToMrkdwn(markdown);
    const chunks = chunkMessage(text, SLACK_MAX_MESSAGE_LENGTH);
    const key = opts.idempotencyKey;
    const skipped = opts.skipChunks ?? 0;
    const found = opts.recover && key !== undefined ? await this.findSentChunks(channel, threadTs, key, skipped, chunks.length) : undefined;
    const messageIds = await sendChunks(chunks, { ...opts, found }, async (chunk, i) => {
      const withButtons = i === chunks.length - 1 && opts.buttons?.length ? opts.buttons : undefined;
      const post = (mrkdwn: boolean) =>
        this.call('chat.postMessage', () =>
          this.client.chat.postMessage({
            channel,
            text: chunk,
            thread_ts: threadTs,
            mrkdwn: mrkdwn && !opts.plain,
            ...(withButtons && { blocks: blocksWithButtons(chunk, withButtons, mrkdwn && !opts.plain) ?? undefined }),
            ...(key !== undefined && { metadata: replyMetadata(key, i) }),
          }),
        );
      let res: Awaited<ReturnType<typeof post>>;
      try {
        res = await post(true);
      } catch (err) {
        if (!(err instanceof FormattingError)) throw err;
        this.logger.warn({ err }, 'slack: formatting rejected, resending as plain text');
        res = await post(false);
      }
      return res.ts;
    });
    return opts.recover ? { messageIds, recovered: found?.size ?? 0 } : { messageIds };
  }

  /**
   * A press needs no answer (Bolt acknowledged it); a note goes to the presser alone (chat.postEphemeral). The App
   * Home tab's answer becomes its view (views.publish).
   */
  async answerInteraction(interaction: InteractionRef, note: string | null, where: InteractionTarget): Promise<void> {
    if (note === null) return;
    if (interaction.kind === 'home') {
      await this.call('views.publish', () => this.client.views.publish({ user_id: where.userId, view: homeView(note) as never }));
      return;
    }
    const { channel, threadTs } = slackCodec.decode(where.conversationId);
    await this.call('chat.postEphemeral', () =>
      this.client.chat.postEphemeral({ channel, user: where.userId, text: note, ...(threadTs !== undefined && { thread_ts: threadTs }) }),
    );
  }

  /**
   * Chunks `from`…`total - 1` of the reply `key` that an earlier attempt sent (index → ts), read from the bot's
   * recent messages in the conversation: its thread (conversations.replies) or its top level
   * (conversations.history). The look-up is bounded (SLACK_RECOVER_*); when Slack refuses it (no
   * `channels:history` / `im:history` scope, rate limit) the reply is sent all the same, with a warning: a
   * possible duplicate is better than no answer, and the gateway counts it.
   */
  private async findSentChunks(channel: string, threadTs: string | undefined, key: string, from: number, total: number): Promise<Map<number, string>> {
    const found = new Map<number, string>();
    const wanted = new Set(Array.from({ length: Math.max(0, total - from) }, (_, i) => from + i));
    const query = { channel, oldest: lookbackOldest(), limit: SLACK_RECOVER_PAGE_SIZE, include_all_metadata: true };
    const method = threadTs === undefined ? 'conversations.history' : 'conversations.replies';
    let cursor: string | undefined;
    for (let page = 0; page < SLACK_RECOVER_MAX_PAGES && found.size < wanted.size; page++) {
      let res: { messages?: HistoryMessage[]; has_more?: boolean; response_metadata?: { next_cursor?: string } };
      try {
        res = await this.call(method, () =>
          threadTs === undefined
            ? this.client.conversations.history({ ...query, cursor })
            : this.client.conversations.replies({ ...query, ts: threadTs, cursor }),
        );
      } catch (err) {
        this.logger.warn(
          { err, method, code: slackErrorCode(err instanceof Error ? err.cause : undefined), found: found.size },
          'slack: could not look for chunks an earlier attempt sent; sending the rest, which may repeat some',
        );
        return found;
      }
      collectChunks(res.messages ?? [], key, wanted, found);
      cursor = res.response_metadata?.next_cursor;
      if (res.has_more !== true || !cursor) break;
    }
    if (found.size > 0) this.logger.info({ key, found: [...found.keys()] }, 'slack: earlier attempt already sent these chunks');
    return found;
  }

  /**
   * Files upload v2 through the SDK's `filesUploadV2`: files.getUploadURLExternal, the bytes to the URL it names,
   * then files.completeUploadExternal shares the file in the conversation (its thread, or a DM's top level), the
   * caption as its comment. Resolves with the file id. Slack has no idempotency key for uploads.
   */
  async sendFile(conversationId: string, file: OutboundFile): Promise<string> {
    const { channel, threadTs } = slackCodec.decode(conversationId);
    const caption = file.caption?.trim() ? markdownToMrkdwn(file.caption.trim()) : undefined;
    const upload = { file: file.data, filename: file.name, title: file.name, ...(caption !== undefined && { initial_comment: caption }) };
    const res = await this.call('files.uploadV2', () =>
      this.client.filesUploadV2(threadTs === undefined ? { ...upload, channel_id: channel } : { ...upload, channel_id: channel, thread_ts: threadTs }),
    );
    const id = res.files[0]?.files?.[0]?.id;
    if (id === undefined) throw new NetworkError('slack files.uploadV2: Slack confirmed the upload without a file id', 'slack');
    return id;
  }

  async edit(conversationId: string, messageId: string, markdown: string): Promise<void> {
    const { channel } = slackCodec.decode(conversationId);
    await this.call('chat.update', () => this.client.chat.update({ channel, ts: messageTs(messageId), text: markdownToMrkdwn(markdown) }));
  }

  async typing(conversationId: string): Promise<void> {
    const { channel, threadTs } = slackCodec.decode(conversationId);
    // Slack has no typing indicator for bots; the assistant thread status is the closest, and needs a thread.
    if (this.typingDisabled || threadTs === undefined) return;
    try {
      await this.call('assistant.threads.setStatus', () =>
        this.client.assistant.threads.setStatus({ channel_id: channel, thread_ts: threadTs, status: this.status }),
      );
    } catch (err) {
      const code = slackErrorCode(err instanceof Error ? err.cause : undefined);
      if (code === undefined || !STATUS_UNAVAILABLE.has(code)) throw err;
      this.typingDisabled = true;
      this.logger.info({ code }, 'slack: thread status not available to this app; typing indicator off');
    }
  }

  async react(conversationId: string, messageId: string, emoji: string, remove = false): Promise<void> {
    const { channel } = slackCodec.decode(conversationId);
    const args = { channel, timestamp: messageTs(messageId), name: slackEmojiName(emoji) };
    try {
      if (remove) await this.call('reactions.remove', () => this.client.reactions.remove(args));
      else await this.call('reactions.add', () => this.client.reactions.add(args));
    } catch (err) {
      const code = slackErrorCode(err instanceof Error ? err.cause : undefined);
      if (code === 'already_reacted' || code === 'no_reaction') return; // the state we wanted is already there
      throw err;
    }
  }

  /** One Web API call: `ratelimited` waits out Retry-After (up to `retries` times), errors become typed errors. */
  private async call<T>(method: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const typed = toPlatformError(err, method);
        if (!(typed instanceof RateLimitedError) || attempt >= this.retries || typed.retryAfterMs > this.maxWaitMs) {
          throw typed;
        }
        this.logger.info({ method, retryAfterMs: typed.retryAfterMs }, 'slack: rate limited, waiting');
        await sleep(typed.retryAfterMs);
      }
    }
  }
}

/** The gateway passes platform ids (ts); accept `<channel>:<ts>` message ids too. */
function messageTs(messageId: string): string {
  const i = messageId.lastIndexOf(':');
  return i === -1 ? messageId : messageId.slice(i + 1);
}
