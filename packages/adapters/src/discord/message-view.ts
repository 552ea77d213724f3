/**
 * The one place that reads discord.js structures: turns a Message into the plain MessageView normalize.ts decides on.
 */
import { ChannelType, type Attachment as DiscordAttachment, type Message } from 'discord.js';
import type { Attachment } from '../types.js';
import { kindOfMime } from '../shared/attachment-kind.js';
import type { ChannelKind, MessageView } from './normalize.js';

/** Discord ids are snowflakes: unsigned 64-bit integers, sent as strings. */
const SNOWFLAKE_RE = /^\d{1,20}$/;

/**
 * The MessageView of a discord.js Message; throws when a field has the wrong type. discord.js copies a gateway
 * event's fields into its Message without checking them (an id that is a number, content that is an object), and
 * a view half-read from such an event could be taken for another message: it is refused whole.
 */
export function viewOf(message: Message, botId: string): MessageView {
  const view = readView(message, botId);
  const wrong = wrongField(view);
  if (wrong !== null) throw new Error(`unreadable MESSAGE_CREATE: ${wrong} has the wrong type`);
  return view;
}

function readView(message: Message, botId: string): MessageView {
  const channel = message.channel;
  const mentionedNames: Record<string, string> = {};
  for (const user of message.mentions.users.values()) {
    const member = message.guild?.members.cache.get(user.id);
    mentionedNames[user.id] = member?.displayName ?? user.globalName ?? user.username;
  }
  const referencedId = message.reference?.messageId;
  const referenced = referencedId ? message.channel.messages.cache.get(referencedId) : undefined;
  return {
    id: message.id,
    channelId: message.channelId,
    guildId: message.guildId,
    channelKind: kindOf(channel.type),
    parentId: channel.isThread() ? channel.parentId : null,
    type: message.type,
    authorId: message.author.id,
    authorName: message.member?.displayName ?? message.author.globalName ?? message.author.username,
    authorIsBot: message.author.bot || message.webhookId !== null,
    content: message.content,
    mentionedUserIds: [...message.mentions.users.keys()],
    mentionedNames,
    botRoleIds: [...message.mentions.roles.values()].filter((role) => role.tags?.botId === botId).map((role) => role.id),
    repliedTo: referencedId
      ? {
          messageId: referencedId,
          authorId: referenced?.author.id ?? message.mentions.repliedUser?.id ?? null,
          content: referenced?.content ?? null,
        }
      : null,
    attachments: [...message.attachments.values()].map(toAttachment),
    sentAt: message.createdTimestamp,
  };
}

function wrongField(v: MessageView): string | null {
  const snowflake = (x: unknown): boolean => typeof x === 'string' && SNOWFLAKE_RE.test(x);
  const checks: Array<[string, boolean]> = [
    ['id', snowflake(v.id)],
    ['channel_id', snowflake(v.channelId)],
    ['guild_id', v.guildId === null || snowflake(v.guildId)],
    ['parent_id', v.parentId === null || snowflake(v.parentId)],
    ['author.id', snowflake(v.authorId)],
    ['author name', typeof v.authorName === 'string'],
    ['content', typeof v.content === 'string'],
    ['mentions', v.mentionedUserIds.every(snowflake) && Object.values(v.mentionedNames).every((n) => typeof n === 'string')],
    [
      'message_reference',
      v.repliedTo === null || (snowflake(v.repliedTo.messageId) && (v.repliedTo.content === null || typeof v.repliedTo.content === 'string')),
    ],
    ['attachments', v.attachments.every(attachmentOk)],
    ['timestamp', Number.isFinite(v.sentAt)],
  ];
  return checks.find(([, ok]) => !ok)?.[0] ?? null;
}

function attachmentOk(a: Attachment): boolean {
  const optionalString = (x: unknown): boolean => x === undefined || typeof x === 'string';
  const size = a.size === undefined || (Number.isSafeInteger(a.size) && a.size >= 0);
  return typeof a.url === 'string' && optionalString(a.fileId) && optionalString(a.name) && optionalString(a.mimeType) && size;
}

function kindOf(type: ChannelType): ChannelKind {
  switch (type) {
    case ChannelType.DM:
      return 'dm';
    case ChannelType.GuildText:
    case ChannelType.GuildAnnouncement:
      return 'text';
    case ChannelType.PublicThread:
    case ChannelType.PrivateThread:
    case ChannelType.AnnouncementThread:
      return 'thread';
    default:
      return 'other';
  }
}

function toAttachment(a: DiscordAttachment): Attachment {
  const mimeType = a.contentType ?? undefined;
  const out: Attachment = { kind: kindOfMime(typeof mimeType === 'string' ? mimeType : undefined), url: a.url, fileId: a.id, name: a.name, size: a.size };
  if (mimeType !== undefined) out.mimeType = mimeType;
  // Voice messages are OGG attachments that carry a waveform (and the message the IS_VOICE_MESSAGE flag).
  if (a.waveform !== null && a.waveform !== undefined) out.voice = true;
  return out;
}
