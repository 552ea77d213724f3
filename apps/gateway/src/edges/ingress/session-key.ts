/**
 * Session keys, in Hermes' format: `agent:<agent>:<platform>:<chat_type>:<chat_id>[:<thread_id>][:<user_id>]`.
 * `<agent>` is the profile (`main` for the default profile, as in Hermes, so a gateway without profiles keeps its
 * keys). DMs: one session per chat (a DM thread, as Slack has, is its own). Groups and plain channels: one session
 * per user, so people in one group do not share a context. Threads: shared by everyone in them.
 */
import type { ChatType, InboundMessage } from '@herald/adapters';
import { DEFAULT_PROFILE, profileKeySegment } from '../../support/config/profile-names.js';

export function sessionKeyFor(
  msg: Pick<InboundMessage, 'platform' | 'chatType' | 'chatId' | 'threadId' | 'userId'>,
  profile: string = DEFAULT_PROFILE,
): string {
  const parts = ['agent', profileKeySegment(profile), msg.platform, msg.chatType, msg.chatId];
  if (msg.threadId) parts.push(msg.threadId);
  if (perUser(msg.chatType)) parts.push(msg.userId);
  return parts.join(':');
}

function perUser(chatType: ChatType): boolean {
  return chatType === 'group' || chatType === 'channel';
}
