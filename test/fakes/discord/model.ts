/**
 * The Discord stand-in's world: users, guilds, channels, messages, and the JSON shapes Discord sends for them
 * (https://discord.com/developers/docs/resources). Kept independent of discord.js on purpose: the fake must
 * speak the wire protocol, not mirror the client under test.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };
export type JsonObject = { [key: string]: Json | undefined };

/** Discord's epoch (2015-01-01T00:00:00Z) for snowflakes. */
const DISCORD_EPOCH_MS = 1_420_070_400_000n;

export const ChannelTypes = { GuildText: 0, DM: 1, GuildVoice: 2, GuildAnnouncement: 5, PublicThread: 11 } as const;
export const MessageTypes = { Default: 0, ChannelPinnedMessage: 6, UserJoin: 7, ThreadCreated: 18, Reply: 19 } as const;

export interface FakeUser {
  id: string;
  username: string;
  globalName?: string;
  bot?: boolean;
}

export interface FakeChannel {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  /** Thread: parent channel. */
  parentId?: string;
  /** Thread: who opened it. */
  ownerId?: string;
  /** DM: the other person. */
  recipient?: FakeUser;
  messageCount: number;
  lastMessageId: string | null;
}

export interface FakeRole {
  id: string;
  name: string;
  managed: boolean;
  botId?: string;
}

export interface FakeGuild {
  id: string;
  name: string;
  ownerId: string;
  roles: FakeRole[];
  memberIds: string[];
}

export interface StoredMessage {
  json: JsonObject;
  channelId: string;
  authorId: string;
}

/** Monotonic snowflakes: timestamp in the high bits, a counter in the low ones. */
export class Snowflakes {
  private counter = 0n;
  private last = 0n;

  next(): string {
    let ts = BigInt(Date.now()) - DISCORD_EPOCH_MS;
    if (ts <= this.last) ts = this.last;
    this.last = ts;
    this.counter = (this.counter + 1n) & 0xfffn;
    return ((ts << 22n) | (1n << 17n) | this.counter).toString();
  }
}

export function timestampOf(snowflake: string): string {
  return new Date(Number((BigInt(snowflake) >> 22n) + DISCORD_EPOCH_MS)).toISOString();
}

export function userJson(u: FakeUser): JsonObject {
  const json: JsonObject = {
    id: u.id,
    username: u.username,
    global_name: u.globalName ?? null,
    discriminator: '0',
    avatar: null,
    public_flags: 0,
  };
  if (u.bot) json.bot = true;
  return json;
}

export function memberJson(joinedAt: string, roles: string[] = []): JsonObject {
  return {
    roles,
    nick: null,
    avatar: null,
    joined_at: joinedAt,
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
  };
}

export function channelJson(c: FakeChannel): JsonObject {
  if (c.type === ChannelTypes.DM) {
    const recipients = c.recipient ? [userJson(c.recipient)] : [];
    return { id: c.id, type: c.type, last_message_id: c.lastMessageId, flags: 0, recipients };
  }
  const base: JsonObject = {
    id: c.id,
    type: c.type,
    guild_id: c.guildId,
    name: c.name ?? 'channel',
    last_message_id: c.lastMessageId,
    rate_limit_per_user: 0,
    flags: 0,
    nsfw: false,
  };
  if (c.type === ChannelTypes.PublicThread) {
    return {
      ...base,
      parent_id: c.parentId ?? null,
      owner_id: c.ownerId ?? null,
      message_count: c.messageCount,
      total_message_sent: c.messageCount,
      member_count: 1,
      thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: timestampOf(c.id), locked: false },
    };
  }
  return { ...base, parent_id: null, position: 0, permission_overwrites: [], topic: null };
}

export function roleJson(r: FakeRole, position: number): JsonObject {
  const json: JsonObject = {
    id: r.id,
    name: r.name,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position,
    permissions: '0',
    managed: r.managed,
    mentionable: false,
    flags: 0,
  };
  if (r.botId) json.tags = { bot_id: r.botId };
  return json;
}
