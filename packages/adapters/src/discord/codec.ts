/**
 * Conversation ids: `discord:<channel>` or `discord:<parent channel>:<thread>`.
 * Discord ids are snowflakes (decimal digits), so a colon never appears inside one.
 */
import type { ConversationCodec } from '../types.js';

export interface DiscordConversation {
  /** The DM or guild channel; for a thread, its parent channel. */
  channelId: string;
  /** The thread channel, when the conversation lives in one. */
  threadId?: string;
}

const PREFIX = 'discord';
const SNOWFLAKE_RE = /^\d{1,20}$/;

function invalid(id: string, why: string): Error {
  return new Error(`Not a Discord conversation id: ${JSON.stringify(id)} (${why})`);
}

function assertSnowflake(id: string, what: string, whole: string): void {
  if (!SNOWFLAKE_RE.test(id)) throw invalid(whole, `${what} must be a snowflake`);
}

export const discordCodec: ConversationCodec<DiscordConversation> = {
  encode({ channelId, threadId }) {
    const id = threadId === undefined ? `${PREFIX}:${channelId}` : `${PREFIX}:${channelId}:${threadId}`;
    assertSnowflake(channelId, 'channel', id);
    if (threadId !== undefined) assertSnowflake(threadId, 'thread', id);
    return id;
  },
  decode(id) {
    const parts = id.split(':');
    if (parts[0] !== PREFIX) throw invalid(id, 'expected the "discord:" prefix');
    if (parts.length < 2 || parts.length > 3) throw invalid(id, 'expected discord:<channel>[:<thread>]');
    assertSnowflake(parts[1], 'channel', id);
    if (parts.length === 2) return { channelId: parts[1] };
    assertSnowflake(parts[2], 'thread', id);
    return { channelId: parts[1], threadId: parts[2] };
  },
};

/** The channel a reply is posted to: the thread when there is one. */
export function replyChannelOf(conv: DiscordConversation): string {
  return conv.threadId ?? conv.channelId;
}

/**
 * The channel a given message lives in. A thread started from a message takes that message's id, and the starter
 * message itself stays in the parent channel, so reacting to the user's first message needs the parent.
 */
export function messageChannelOf(conv: DiscordConversation, messageId: string): string {
  if (conv.threadId !== undefined && messageId === conv.threadId) return conv.channelId;
  return replyChannelOf(conv);
}
