/**
 * Slack `message` / `app_mention` events → what the ingress should do with them.
 *
 * Pure: whether a channel message in a thread is taken depends on thread memory, which the ingress asks
 * (`needsThreadCheck`); everything else is decided here from the event alone.
 */
import type { Attachment, InboundMessage } from '../types.js';
import { isSlackId, isSlackTs, slackCodec } from './codec.js';
import { kindOfMime } from '../shared/attachment-kind.js';
import { SLACK_FILE_REF_PREFIX } from './config.js';
import { isRecord, stringAt } from '../shared/wire-values.js';

/** Subtypes that are still a person writing to us; everything else (edits, deletes, joins, bots) is ignored. */
const USER_SUBTYPES = new Set(['file_share', 'thread_broadcast']);

export interface SlackIdentity {
  botUserId: string;
  botId?: string;
}

export type Classification =
  | { action: 'ignore'; reason: string }
  /** Ids no real Slack event has (a channel `__proto__`, a thread_ts that is no timestamp): skipped with a warning. */
  | { action: 'refuse'; reason: string }
  | {
      action: 'take';
      /** `<channel>:<ts>`: the same message arrives as `message` and as `app_mention`. */
      dedupeKey: string;
      message: InboundMessage;
      /** A channel message without a mention: taken only if the bot already takes part in the thread. */
      needsThreadCheck: boolean;
      /** A mention in a channel: the bot now takes part in this thread. */
      remembersThread: boolean;
    };

export function classifySlackEvent(event: unknown, me: SlackIdentity): Classification {
  if (!isRecord(event)) return ignore('not an object');
  const type = stringAt(event, 'type');
  if (type !== 'message' && type !== 'app_mention') return ignore(`event type ${type ?? '?'}`);
  const subtype = stringAt(event, 'subtype');
  if (subtype === 'bot_message' || stringAt(event, 'bot_id') !== undefined) return ignore('bot message');
  if (subtype !== undefined && !USER_SUBTYPES.has(subtype)) return ignore(`subtype ${subtype}`);

  const channel = stringAt(event, 'channel');
  const ts = stringAt(event, 'ts');
  const user = stringAt(event, 'user');
  if (channel === undefined || ts === undefined || user === undefined) return ignore('missing channel, ts or user');
  if (user === me.botUserId) return ignore('own message');
  const threadTs = stringAt(event, 'thread_ts');
  const malformed = malformedIds(channel, user, ts, threadTs);
  if (malformed !== null) return { action: 'refuse', reason: malformed };

  const rawText = typeof event.text === 'string' ? event.text : '';
  const attachments = filesToAttachments(event.files);
  // app_mention carries no channel_type, but it is never sent for DMs.
  const isDm = type === 'message' && stringAt(event, 'channel_type') === 'im';
  const mentioned = mentionRe(me.botUserId).test(rawText);
  const text = decodeEntities(rawText.replace(mentionRe(me.botUserId, 'g'), ' '))
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
  if (text === '' && attachments.length === 0) return ignore('empty message');

  const team = stringAt(event, 'team');
  const base = {
    platform: 'slack' as const,
    messageId: `${channel}:${ts}`,
    chatId: channel,
    userId: user,
    userName: userName(event),
    text,
    attachments,
    platformMessageId: ts,
    sentAt: Math.round(Number.parseFloat(ts) * 1000),
    ...(team !== undefined && { spaceId: team }),
  };
  const dedupeKey = `${channel}:${ts}`;

  if (isDm) {
    // Top-level DMs share one session per DM; a reply thread inside a DM is its own conversation.
    const message: InboundMessage =
      threadTs === undefined
        ? { ...base, conversationId: slackCodec.encode({ channel }), chatType: 'dm' }
        : { ...base, conversationId: slackCodec.encode({ channel, threadTs }), chatType: 'dm', threadId: threadTs };
    return { action: 'take', dedupeKey, message: clean(message), needsThreadCheck: false, remembersThread: false };
  }

  // Channels, private channels and group DMs: answers go into the thread the message started or sits in.
  const thread = threadTs ?? ts;
  const message: InboundMessage = {
    ...base,
    conversationId: slackCodec.encode({ channel, threadTs: thread }),
    chatType: 'thread',
    threadId: thread,
  };
  return { action: 'take', dedupeKey, message: clean(message), needsThreadCheck: !mentioned, remembersThread: mentioned };
}

/** Which of an event's ids breaks the codec's rules, or null. */
function malformedIds(channel: string, user: string, ts: string, threadTs: string | undefined): string | null {
  if (!isSlackId(channel)) return 'malformed channel id';
  if (!isSlackId(user)) return 'malformed user id';
  if (!isSlackTs(ts)) return 'malformed ts';
  if (threadTs !== undefined && !isSlackTs(threadTs)) return 'malformed thread_ts';
  return null;
}

function ignore(reason: string): Classification {
  return { action: 'ignore', reason };
}

/** `<@U123>` or `<@U123|name>`. */
function mentionRe(userId: string, flags = ''): RegExp {
  return new RegExp(`<@${userId.replace(/[^A-Za-z0-9]/g, '')}(?:\\|[^>]*)?>`, flags);
}

/** Slack escapes exactly these three in message text. */
function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function userName(event: Record<string, unknown>): string | undefined {
  const profile = event.user_profile;
  if (!isRecord(profile)) return undefined;
  return stringAt(profile, 'display_name') ?? stringAt(profile, 'real_name') ?? stringAt(profile, 'name');
}

function filesToAttachments(files: unknown): Attachment[] {
  if (!Array.isArray(files)) return [];
  const out: Attachment[] = [];
  for (const f of files) {
    if (!isRecord(f)) continue;
    const id = stringAt(f, 'id');
    const url = stringAt(f, 'url_private_download') ?? stringAt(f, 'url_private');
    if (url === undefined) {
      // Slack Connect and some large files come as a stub: the worker asks files.info what they are (files.ts).
      if (id !== undefined && stringAt(f, 'file_access') === 'check_file_info')
        out.push({ kind: 'file', url: `${SLACK_FILE_REF_PREFIX}${id}`, fileId: id, unresolved: true });
      continue;
    }
    const mimeType = stringAt(f, 'mimetype');
    const attachment: Attachment = { kind: kindOfMime(mimeType), url };
    if (id !== undefined) attachment.fileId = id;
    if (mimeType !== undefined) attachment.mimeType = mimeType;
    // Slack's recorded audio clips ("huddle"/voice clips) say so in their subtype.
    if (stringAt(f, 'subtype') === 'slack_audio') attachment.voice = true;
    const name = stringAt(f, 'name');
    if (name !== undefined) attachment.name = name;
    if (typeof f.size === 'number') attachment.size = f.size;
    out.push(attachment);
  }
  return out;
}

/** Plain JSON for Redis: drop undefined fields rather than carrying them as keys. */
function clean(msg: InboundMessage): InboundMessage {
  if (msg.userName === undefined) delete msg.userName;
  return msg;
}
