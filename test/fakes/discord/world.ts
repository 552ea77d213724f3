/**
 * The stand-in's state and the Discord rules both REST routes and test helpers go through: who may post where,
 * what a message looks like on the wire, which gateway events an action fires.
 */
import {
  ChannelTypes,
  MessageTypes,
  type Snowflakes,
  channelJson,
  memberJson,
  roleJson,
  timestampOf,
  userJson,
  type FakeChannel,
  type FakeGuild,
  type FakeUser,
  type JsonObject,
  type StoredMessage,
} from './model.js';
import { MAX_CONTENT_LENGTH, DEFAULT_NONCE_WINDOW_MS, MAX_THREAD_NAME_LENGTH, Intents, DiscordHttpError, fieldError, nonceOf, type Emit } from './rules.js';

export interface UserMessageInput {
  channelId: string;
  /** Defaults to the channel's guild; ignored for DMs. */
  guildId?: string;
  author: FakeUser;
  content: string;
  /** Extra users to list as mentioned; `<@id>` in the content is always parsed, as Discord does. */
  mentions?: FakeUser[];
  /** The message this one replies to (same channel). */
  referenced?: string;
  /** Whether the reply pings the replied-to author (Discord's default: yes). */
  pingReplied?: boolean;
  /** Message type; defaults to Default (0) or Reply (19). */
  type?: number;
  attachments?: { filename: string; contentType?: string; size?: number; url?: string; content?: Buffer; waveform?: string }[];
}

export interface WorldOptions {
  /** See DEFAULT_NONCE_WINDOW_MS. */
  nonceWindowMs?: number;
}

export class World {
  readonly users = new Map<string, FakeUser>();
  readonly guilds = new Map<string, FakeGuild>();
  readonly channels = new Map<string, FakeChannel>();
  readonly messages = new Map<string, StoredMessage>();
  /** Messages a thread was started from, so a second start fails like Discord's 160004. */
  private readonly threadedMessages = new Set<string>();
  /** `<author id>:<nonce>` → the message created with it and when, for `enforce_nonce`. */
  private readonly nonces = new Map<string, { messageId: string; at: number }>();
  private clockOffsetMs = 0;
  readonly nonceWindowMs: number;

  constructor(
    readonly bot: FakeUser,
    readonly ids: Snowflakes,
    private readonly emit: Emit,
    opts: WorldOptions = {},
  ) {
    this.users.set(bot.id, bot);
    this.nonceWindowMs = opts.nonceWindowMs ?? DEFAULT_NONCE_WINDOW_MS;
  }

  /** The stand-in's clock (nonce ageing); `advanceClock` moves it ahead of real time. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  advanceClock(ms: number): void {
    this.clockOffsetMs += ms;
  }

  addUser(u: FakeUser): FakeUser {
    this.users.set(u.id, u);
    for (const g of this.guilds.values()) if (!g.memberIds.includes(u.id)) g.memberIds.push(u.id);
    return u;
  }

  addGuild(name: string): FakeGuild {
    const id = this.ids.next();
    const guild: FakeGuild = {
      id,
      name,
      ownerId: [...this.users.values()].find((u) => !u.bot)?.id ?? this.bot.id,
      roles: [
        { id, name: '@everyone', managed: false },
        { id: this.ids.next(), name: this.bot.username, managed: true, botId: this.bot.id },
      ],
      memberIds: [...this.users.keys()],
    };
    this.guilds.set(id, guild);
    return guild;
  }

  addChannel(guildId: string, name: string, type: number = ChannelTypes.GuildText): FakeChannel {
    const channel: FakeChannel = { id: this.ids.next(), type, name, guildId, messageCount: 0, lastMessageId: null };
    this.channels.set(channel.id, channel);
    if (this.guilds.has(guildId)) this.emit('CHANNEL_CREATE', channelJson(channel), { intent: Intents.Guilds });
    return channel;
  }

  botRole(guildId: string): string | undefined {
    return this.guilds.get(guildId)?.roles.find((r) => r.botId === this.bot.id)?.id;
  }

  /** The DM channel between the bot and a user (one per user, as on Discord). */
  openDm(user: FakeUser): FakeChannel {
    this.users.set(user.id, user);
    for (const c of this.channels.values()) if (c.type === ChannelTypes.DM && c.recipient?.id === user.id) return c;
    const dm: FakeChannel = {
      id: this.ids.next(),
      type: ChannelTypes.DM,
      recipient: user,
      messageCount: 0,
      lastMessageId: null,
    };
    this.channels.set(dm.id, dm);
    return dm;
  }

  channel(id: string): FakeChannel {
    const c = this.channels.get(id);
    if (!c) throw new DiscordHttpError(404, 10003, 'Unknown Channel');
    return c;
  }

  message(channelId: string, messageId: string): StoredMessage {
    const m = this.messages.get(messageId);
    if (!m || m.channelId !== channelId) throw new DiscordHttpError(404, 10008, 'Unknown Message');
    return m;
  }

  guildOf(channel: FakeChannel): string | undefined {
    if (channel.guildId) return channel.guildId;
    return channel.parentId ? this.channels.get(channel.parentId)?.guildId : undefined;
  }

  /** A person (or another bot) writes in a channel; fires MESSAGE_CREATE. */
  postUserMessage(input: UserMessageInput): JsonObject {
    const channel = this.channel(input.channelId);
    this.addUser(input.author);
    const mentioned = new Map<string, FakeUser>();
    for (const m of input.content.matchAll(/<@!?(\d+)>/g)) {
      const u = this.users.get(m[1]);
      if (u) mentioned.set(u.id, u);
    }
    for (const u of input.mentions ?? []) mentioned.set(u.id, u);
    let referenced: StoredMessage | undefined;
    if (input.referenced !== undefined) {
      referenced = this.message(channel.id, input.referenced);
      const repliedAuthor = this.users.get(referenced.authorId);
      const pings = input.pingReplied ?? true;
      if (repliedAuthor && pings && repliedAuthor.id !== input.author.id) mentioned.set(repliedAuthor.id, repliedAuthor);
    }
    const roleIds = [...input.content.matchAll(/<@&(\d+)>/g)].map((m) => m[1]);
    const type = input.type ?? (referenced ? MessageTypes.Reply : MessageTypes.Default);
    const attachments = (input.attachments ?? []).map((a) => {
      const id = this.ids.next();
      return {
        id,
        filename: a.filename,
        size: a.size ?? 0,
        url: a.url ?? `https://cdn.discordapp.com/attachments/${channel.id}/${id}/${a.filename}`,
        proxy_url: `https://media.discordapp.net/attachments/${channel.id}/${id}/${a.filename}`,
        ...(a.contentType ? { content_type: a.contentType } : {}),
        ...(a.waveform ? { waveform: a.waveform, duration_secs: 3 } : {}),
      };
    });
    const mentions = [...mentioned.values()];
    const json = this.storeMessage(channel, input.author, input.content, type, mentions, roleIds, referenced, attachments);
    const isDm = channel.type === ChannelTypes.DM;
    this.emit('MESSAGE_CREATE', json, {
      intent: isDm ? Intents.DirectMessages : Intents.GuildMessages,
      contentVisibleWithoutIntent: isDm || mentioned.has(this.bot.id) || input.author.id === this.bot.id,
    });
    return json;
  }

  /** POST /channels/{id}/messages by the bot; the message JSON (see `postBotMessage`). */
  createBotMessage(channelId: string, body: JsonObject): JsonObject {
    return this.postBotMessage(channelId, body).message;
  }

  /**
   * POST /channels/{id}/messages by the bot. With `enforce_nonce` and a `nonce` the bot used for a message within
   * the nonce window, Discord returns that message and creates none (`created: false`, no MESSAGE_CREATE).
   */
  postBotMessage(channelId: string, body: JsonObject, attachments: JsonObject[] = []): { message: JsonObject; created: boolean } {
    const channel = this.channel(channelId);
    const content = typeof body.content === 'string' ? body.content : '';
    if (content.length > MAX_CONTENT_LENGTH) {
      throw fieldError('content', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_CONTENT_LENGTH} or fewer in length.`);
    }
    // A message may be a file alone (uploads.ts makes the attachments).
    if (content.trim() === '' && attachments.length === 0) throw new DiscordHttpError(400, 50006, 'Cannot send an empty message');
    const nonce = nonceOf(body);
    if (nonce !== undefined && body.enforce_nonce === true) {
      const earlier = this.nonces.get(`${this.bot.id}:${nonce}`);
      const stored = earlier === undefined ? undefined : this.messages.get(earlier.messageId);
      if (earlier !== undefined && stored !== undefined && this.now() - earlier.at < this.nonceWindowMs) {
        return { message: stored.json, created: false };
      }
    }
    let referenced: StoredMessage | undefined;
    const ref = body.message_reference;
    if (ref && typeof ref === 'object' && !Array.isArray(ref)) {
      const refChannel = typeof ref.channel_id === 'string' ? ref.channel_id : channel.id;
      const found = typeof ref.message_id === 'string' ? this.messages.get(ref.message_id) : undefined;
      if (found && found.channelId === refChannel && refChannel === channel.id) referenced = found;
      else if (ref.fail_if_not_exists !== false) {
        throw fieldError('message_reference', 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
      }
    }
    const type = referenced ? MessageTypes.Reply : MessageTypes.Default;
    const mentions = this.allowedUserMentions(content, body);
    const json = this.storeMessage(channel, this.bot, content, type, mentions, [], referenced, attachments);
    if (nonce !== undefined) {
      // Discord echoes the nonce on the message it returns and in MESSAGE_CREATE.
      json.nonce = body.nonce ?? null;
      this.nonces.set(`${this.bot.id}:${nonce}`, { messageId: String(json.id), at: this.now() });
    }
    this.emit('MESSAGE_CREATE', json, {
      intent: channel.type === ChannelTypes.DM ? Intents.DirectMessages : Intents.GuildMessages,
      contentVisibleWithoutIntent: true,
    });
    return { message: json, created: true };
  }

  /** PATCH /channels/{id}/messages/{id} by the bot. */
  editBotMessage(channelId: string, messageId: string, body: JsonObject): JsonObject {
    const channel = this.channel(channelId);
    const stored = this.message(channel.id, messageId);
    if (stored.authorId !== this.bot.id) {
      throw new DiscordHttpError(403, 50005, 'Cannot edit a message authored by another user');
    }
    if (typeof body.content === 'string') {
      if (body.content.length > MAX_CONTENT_LENGTH) {
        throw fieldError('content', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_CONTENT_LENGTH} or fewer in length.`);
      }
      stored.json.content = body.content;
      stored.json.edited_timestamp = new Date().toISOString();
    }
    const update = { ...stored.json, guild_id: this.guildOf(channel) };
    this.emit('MESSAGE_UPDATE', update, {
      intent: channel.type === ChannelTypes.DM ? Intents.DirectMessages : Intents.GuildMessages,
      contentVisibleWithoutIntent: true,
    });
    return stored.json;
  }

  /** POST /channels/{id}/messages/{id}/threads: the thread takes the message's id, as on Discord. */
  startThreadFromMessage(channelId: string, messageId: string, body: JsonObject): JsonObject {
    const channel = this.channel(channelId);
    if (channel.type !== ChannelTypes.GuildText && channel.type !== ChannelTypes.GuildAnnouncement) {
      throw new DiscordHttpError(400, 50024, 'Cannot execute action on this channel type');
    }
    this.message(channel.id, messageId);
    const name = typeof body.name === 'string' ? body.name : '';
    if (name.length < 1 || name.length > MAX_THREAD_NAME_LENGTH) {
      throw fieldError('name', 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${MAX_THREAD_NAME_LENGTH} in length.`);
    }
    if (this.threadedMessages.has(messageId)) {
      throw new DiscordHttpError(400, 160004, 'A thread has already been created for this message');
    }
    this.threadedMessages.add(messageId);
    return this.createThread(channel, messageId, name, this.bot);
  }

  /** A person opens a thread (no starter message); fires THREAD_CREATE. */
  createThread(parent: FakeChannel, id: string, name: string, owner: FakeUser): JsonObject {
    const thread: FakeChannel = {
      id,
      type: ChannelTypes.PublicThread,
      name,
      guildId: parent.guildId,
      parentId: parent.id,
      ownerId: owner.id,
      messageCount: 0,
      lastMessageId: null,
    };
    this.channels.set(id, thread);
    const json = channelJson(thread);
    this.emit('THREAD_CREATE', { ...json, newly_created: true }, { intent: Intents.Guilds });
    return json;
  }

  /** GUILD_CREATE payload: the guild with its channels, active threads, roles and the bot's member. */
  guildCreate(guild: FakeGuild, joinedAt: string): JsonObject {
    const channels = [...this.channels.values()].filter((c) => c.guildId === guild.id);
    const strip = (json: JsonObject): JsonObject => {
      const { guild_id: _omit, ...rest } = json;
      return rest;
    };
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      owner_id: guild.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      nsfw_level: 0,
      premium_tier: 0,
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      public_updates_channel_id: null,
      safety_alerts_channel_id: null,
      preferred_locale: 'en-US',
      features: [],
      emojis: [],
      stickers: [],
      roles: guild.roles.map((r, i) => roleJson(r, i)),
      joined_at: joinedAt,
      large: false,
      unavailable: false,
      member_count: guild.memberIds.length,
      members: [{ ...memberJson(joinedAt, [this.botRole(guild.id) ?? guild.id]), user: userJson(this.bot) }],
      channels: channels.filter((c) => c.type !== ChannelTypes.PublicThread).map((c) => strip(channelJson(c))),
      threads: channels.filter((c) => c.type === ChannelTypes.PublicThread).map((c) => channelJson(c)),
      voice_states: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
      premium_progress_bar_enabled: false,
    };
  }

  /** Users pinged by the bot's message, after `allowed_mentions` (Discord parses `<@id>` only when allowed). */
  private allowedUserMentions(content: string, body: JsonObject): FakeUser[] {
    const allowed = body.allowed_mentions;
    if (allowed && typeof allowed === 'object' && !Array.isArray(allowed)) {
      const parse = Array.isArray(allowed.parse) ? allowed.parse : [];
      if (!parse.includes('users')) return [];
    }
    return [...content.matchAll(/<@!?(\d+)>/g)].flatMap((m) => {
      const u = this.users.get(m[1]);
      return u ? [u] : [];
    });
  }

  private storeMessage(
    channel: FakeChannel,
    author: FakeUser,
    content: string,
    type: number,
    mentions: FakeUser[],
    roleIds: string[],
    referenced: StoredMessage | undefined,
    attachments: JsonObject[],
  ): JsonObject {
    const id = this.ids.next();
    const guildId = this.guildOf(channel);
    const joinedAt = timestampOf(channel.id);
    const json: JsonObject = {
      id,
      type,
      channel_id: channel.id,
      author: userJson(author),
      content,
      timestamp: timestampOf(id),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: mentions.map((u) => (guildId ? { ...userJson(u), member: memberJson(joinedAt) } : userJson(u))),
      mention_roles: roleIds,
      attachments,
      embeds: [],
      pinned: false,
      flags: 0,
      components: [],
    };
    if (guildId) {
      json.guild_id = guildId;
      json.member = memberJson(joinedAt, author.id === this.bot.id ? [this.botRole(guildId) ?? guildId] : []);
    } else {
      // Discord adds channel_type to MESSAGE_CREATE; without it discord.js cannot build the DM channel.
      json.channel_type = channel.type;
    }
    if (referenced) {
      const reference: JsonObject = { type: 0, message_id: referenced.json.id ?? null, channel_id: channel.id };
      if (guildId) reference.guild_id = guildId;
      json.message_reference = reference;
      // Discord nests one level only: the referenced message comes without its own referenced_message.
      const { referenced_message: _nested, ...shallow } = referenced.json;
      json.referenced_message = shallow;
    }
    this.messages.set(id, { json, channelId: channel.id, authorId: author.id });
    channel.messageCount += 1;
    channel.lastMessageId = id;
    return json;
  }
}
