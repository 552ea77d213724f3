/**
 * Pure Discord message logic: which messages the bot takes, and the InboundMessage it hands to the gateway.
 * Works on `MessageView`, a plain snapshot of a discord.js Message (see message-view.ts), so it is testable
 * without a connection.
 */
import type { Attachment, ChatType, InboundMessage } from '../types.js';
import { discordCodec } from './codec.js';
import { DISCORD_EMPTY_TEXT_NOTE, DISCORD_THREAD_FALLBACK_NAME, DISCORD_THREAD_NAME_MAX, type AllowBots } from './config.js';

/** Message types that carry a person's words; everything else (joins, pins, boosts, thread notices) is noise. */
const DISCORD_MESSAGE_TYPE_DEFAULT = 0;
const DISCORD_MESSAGE_TYPE_REPLY = 19;

export type ChannelKind = 'dm' | 'text' | 'thread' | 'other';

export interface MessageView {
  id: string;
  channelId: string;
  guildId: string | null;
  /** dm; text = guild text/announcement channel (threads can start there); thread; other = e.g. a voice channel's chat. */
  channelKind: ChannelKind;
  /** The thread's parent channel. */
  parentId: string | null;
  type: number;
  authorId: string;
  authorName: string;
  authorIsBot: boolean;
  content: string;
  /** Users the message pings (Discord's `mentions`, which includes the replied-to author when the reply pings). */
  mentionedUserIds: string[];
  /** Display names of mentioned users, to turn `<@id>` into `@name` for the agent. */
  mentionedNames: Record<string, string>;
  /** Mentioned roles that are this bot's own managed role (people often pick the role from the autocomplete). */
  botRoleIds: string[];
  repliedTo: { messageId: string; authorId: string | null; content: string | null } | null;
  attachments: Attachment[];
  sentAt: number;
}

export interface DiscordPolicy {
  botId: string;
  requireMention: boolean;
  autoThread: boolean;
  freeResponseChannels: ReadonlySet<string>;
  allowBots: AllowBots;
}

export type Decision = { take: false; reason: string } | { take: true; addressed: boolean; openThread: boolean; joinThread: boolean };

/**
 * Whether to take a message. `participating` says whether the bot already takes part in the thread the message is
 * in (only asked for thread messages).
 */
export function decide(view: MessageView, policy: DiscordPolicy, participating: boolean): Decision {
  const { botId } = policy;
  if (view.authorId === botId) return { take: false, reason: 'own message' };
  if (view.type !== DISCORD_MESSAGE_TYPE_DEFAULT && view.type !== DISCORD_MESSAGE_TYPE_REPLY) {
    return { take: false, reason: `system message type ${view.type}` };
  }
  const addressed = addressesBot(view, botId);
  if (view.authorIsBot) {
    if (policy.allowBots === 'none') return { take: false, reason: 'message from another bot' };
    if (policy.allowBots === 'mentions' && !addressed) return { take: false, reason: 'bot message without a mention' };
  }
  if (view.channelKind === 'dm') return { take: true, addressed, openThread: false, joinThread: false };

  if (!addressed && addressesSomeoneElse(view, botId)) return { take: false, reason: 'addressed to someone else' };
  const inThread = view.channelKind === 'thread';
  const free = policy.freeResponseChannels.has(view.channelId) || policy.freeResponseChannels.has(view.parentId ?? '');
  if (addressed) {
    // Free-response channels are meant for talking in place, so only a mention elsewhere opens a thread.
    const openThread = policy.autoThread && view.channelKind === 'text' && !free;
    return { take: true, addressed, openThread, joinThread: inThread && !participating };
  }
  if (!policy.requireMention || free || (inThread && participating)) {
    return { take: true, addressed, openThread: false, joinThread: false };
  }
  return { take: false, reason: 'not addressed to the bot' };
}

function addressesBot(view: MessageView, botId: string): boolean {
  return view.mentionedUserIds.includes(botId) || view.botRoleIds.length > 0 || view.repliedTo?.authorId === botId || mentionPattern(botId).test(view.content);
}

/** Pings other people, or replies to someone other than the bot: people talking among themselves. */
function addressesSomeoneElse(view: MessageView, botId: string): boolean {
  if (view.mentionedUserIds.some((id) => id !== botId)) return true;
  const repliedAuthor = view.repliedTo?.authorId;
  return repliedAuthor != null && repliedAuthor !== botId;
}

function mentionPattern(userId: string, flags = ''): RegExp {
  return new RegExp(`<@!?${userId}>`, flags);
}

/** The text the agent sees: bot mentions removed, other mentions readable, never empty. */
export function cleanText(view: MessageView, botId: string): string {
  let text = view.content.replace(mentionPattern(botId, 'g'), ' ');
  for (const roleId of view.botRoleIds) text = text.replace(new RegExp(`<@&${roleId}>`, 'g'), ' ');
  text = text.replace(/<@!?(\d+)>/g, (whole, id: string) => {
    const name = view.mentionedNames[id];
    return name ? `@${name}` : whole;
  });
  text = text
    .split('\n')
    .map((line) => line.replace(/[ \t]{2,}/g, ' ').trim())
    .join('\n')
    .trim();
  return text === '' ? DISCORD_EMPTY_TEXT_NOTE : text;
}

/** A message with files may have no words: the files speak for it (no "sent no text" note). */
function textWithFiles(view: MessageView, botId: string): string {
  const text = cleanText(view, botId);
  return text === DISCORD_EMPTY_TEXT_NOTE && view.attachments.length > 0 ? '' : text;
}

/** A thread name from the message: first line, mention-free, at most DISCORD_THREAD_NAME_MAX characters. */
export function threadNameFor(view: MessageView, botId: string): string {
  const text = cleanText(view, botId);
  if (text === DISCORD_EMPTY_TEXT_NOTE) return DISCORD_THREAD_FALLBACK_NAME;
  const firstLine = text.split('\n').find((l) => l.trim() !== '') ?? '';
  const name = firstLine.replace(/\s+/g, ' ').trim();
  if (name === '') return DISCORD_THREAD_FALLBACK_NAME;
  if (name.length <= DISCORD_THREAD_NAME_MAX) return name;
  let cut = DISCORD_THREAD_NAME_MAX - 1;
  const code = name.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // keep surrogate pairs whole
  return `${name.slice(0, cut).trimEnd()}…`;
}

export interface Placement {
  chatType: ChatType;
  chatId: string;
  threadId?: string;
}

/** Where the conversation lives: DM, a thread (chat = parent channel), or the channel itself. */
export function placementOf(view: MessageView, openedThreadId?: string): Placement {
  if (view.channelKind === 'dm') return { chatType: 'dm', chatId: view.channelId };
  if (view.channelKind === 'thread' && view.parentId !== null) {
    return { chatType: 'thread', chatId: view.parentId, threadId: view.channelId };
  }
  if (openedThreadId !== undefined) return { chatType: 'thread', chatId: view.channelId, threadId: openedThreadId };
  return { chatType: 'channel', chatId: view.channelId };
}

export function toInbound(view: MessageView, botId: string, placement: Placement): InboundMessage {
  const msg: InboundMessage = {
    platform: 'discord',
    messageId: view.id,
    conversationId: discordCodec.encode(
      placement.threadId === undefined ? { channelId: placement.chatId } : { channelId: placement.chatId, threadId: placement.threadId },
    ),
    chatType: placement.chatType,
    chatId: placement.chatId,
    userId: view.authorId,
    userName: view.authorName,
    text: textWithFiles(view, botId),
    attachments: view.attachments,
    platformMessageId: view.id,
    sentAt: view.sentAt,
  };
  if (placement.threadId !== undefined) msg.threadId = placement.threadId;
  if (view.guildId !== null) msg.spaceId = view.guildId;
  if (view.repliedTo && view.repliedTo.content !== null) {
    msg.quoted = {
      platformMessageId: view.repliedTo.messageId,
      text: view.repliedTo.content,
      fromBot: view.repliedTo.authorId === botId,
    };
  }
  return msg;
}
