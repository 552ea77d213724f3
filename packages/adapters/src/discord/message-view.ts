/**
 * The one place that reads discord.js structures: turns a Message into the plain MessageView normalize.ts decides on.
 */
import { ChannelType, type Attachment as DiscordAttachment, type Message } from 'discord.js';
import type { Attachment } from '../types.js';
import type { ChannelKind, MessageView } from './normalize.js';

export function viewOf(message: Message, botId: string): MessageView {
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
  const family = mimeType?.split('/')[0];
  const kind = family === 'image' || family === 'audio' || family === 'video' ? family : 'file';
  const out: Attachment = { kind, url: a.url, name: a.name, size: a.size };
  if (mimeType !== undefined) out.mimeType = mimeType;
  return out;
}
