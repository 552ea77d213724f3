/**
 * The stand-in's application commands and interactions
 * (https://discord.com/developers/docs/interactions/application-commands, …/receiving-and-responding):
 *  - PUT/GET /applications/{app}/commands and /applications/{app}/guilds/{guild}/commands (bulk overwrite);
 *  - a person invokes a registered command → INTERACTION_CREATE (type 2) with a token;
 *  - POST /interactions/{id}/{token}/callback, once, within 3 s of the interaction (else 10062 Unknown interaction);
 *  - PATCH /webhooks/{app}/{token}/messages/@original and POST /webhooks/{app}/{token} (follow-ups) for 15 minutes.
 * Interaction endpoints take no bot token: the interaction token in the path authorises them.
 */
import { channelJson, memberJson, userJson, type FakeUser, type JsonObject } from './model.js';
import { DiscordHttpError, fieldError } from './rules.js';
import type { World } from './world.js';

/** Discord: the initial response must come within 3 s. */
const INTERACTION_ACK_WINDOW_MS = 3_000;
/** Discord: the token works for follow-ups for 15 minutes. */
const INTERACTION_TOKEN_TTL_MS = 15 * 60_000;
const NAME_RE = /^[-_\p{Ll}\p{N}]{1,32}$/u;
const EPHEMERAL = 1 << 6;
const CallbackType = { ChannelMessage: 4, DeferredChannelMessage: 5, DeferredUpdate: 6, UpdateMessage: 7 } as const;

export interface RegisteredCommand {
  id: string;
  name: string;
  description: string;
  options: JsonObject[];
  /** Absent: global. */
  guildId?: string;
}

export interface InteractionRecord {
  id: string;
  /** 2 application command, 3 message component (a button press). */
  type: number;
  /** A press: the button's custom_id and the message it is under. */
  customId?: string;
  messageId?: string;
  token: string;
  channelId: string;
  userId: string;
  createdAt: number;
  /** The callback type the bot answered with (5 = deferred), once it did. */
  callbackType: number | null;
  /** Flags of the response (64 = ephemeral). */
  flags: number;
  /** Every message the bot put out through this interaction, in order: the original response first. */
  messages: InteractionMessage[];
}

export interface InteractionMessage {
  id: string;
  content: string;
  flags: number;
  via: 'callback' | 'original' | 'followup';
  components?: JsonObject[];
}

export interface PressButtonInput {
  user: FakeUser;
  channelId: string;
  /** A bot message in the channel, or a message the bot sent through an interaction. */
  messageId: string;
  customId: string;
}

export interface InvokeCommandInput {
  user: FakeUser;
  channelId: string;
  name: string;
  /** The command's options by name (strings only: Herald's commands take one text option). */
  options?: Record<string, string>;
}

export class FakeInteractions {
  readonly registered: RegisteredCommand[] = [];
  readonly interactions = new Map<string, InteractionRecord>();
  /** How long the bot has to acknowledge (tests may widen it; the default is Discord's). */
  ackWindowMs = INTERACTION_ACK_WINDOW_MS;

  constructor(
    private readonly world: World,
    private readonly dispatch: (t: string, d: JsonObject) => void,
  ) {}

  /** PUT: replaces every command of the scope; returns them with ids. */
  overwrite(appId: string, guildId: string | undefined, body: unknown): JsonObject[] {
    this.checkApp(appId);
    if (guildId !== undefined && !this.world.guilds.has(guildId)) throw new DiscordHttpError(404, 10004, 'Unknown Guild');
    if (!Array.isArray(body)) throw new DiscordHttpError(400, 50035, 'Invalid Form Body');
    const next = body.map((raw, i) => this.readCommand(raw, i, guildId));
    const names = new Set<string>();
    for (const c of next) {
      if (names.has(c.name)) throw fieldError(`${next.indexOf(c)}.name`, 'APPLICATION_COMMANDS_DUPLICATE_NAME', `Application command names must be unique`);
      names.add(c.name);
    }
    for (let i = this.registered.length - 1; i >= 0; i--) if (this.registered[i].guildId === guildId) this.registered.splice(i, 1);
    this.registered.push(...next);
    return next.map((c) => this.commandJson(c));
  }

  list(appId: string, guildId: string | undefined): JsonObject[] {
    this.checkApp(appId);
    return this.registered.filter((c) => c.guildId === guildId).map((c) => this.commandJson(c));
  }

  /** A person runs a slash command; it must be registered globally or in the channel's server. Returns the interaction id. */
  invokeCommand(input: InvokeCommandInput): string {
    const channel = this.world.channel(input.channelId);
    const guildId = this.world.guildOf(channel);
    const command = this.registered.find((c) => c.name === input.name && (c.guildId === undefined || c.guildId === guildId));
    if (!command) throw new Error(`/${input.name} is not registered for this channel: Discord would not offer it`);
    this.world.addUser(input.user);
    const id = this.world.ids.next();
    const token = `aW50ZXJhY3Rpb24${id}${Math.random().toString(36).slice(2)}`;
    const options = Object.entries(input.options ?? {}).map(([name, value]) => ({ name, type: 3, value }));
    const d: JsonObject = {
      ...this.basePayload(id, token, channel, guildId, input.user),
      type: 2,
      data: { id: command.id, name: command.name, type: 1, ...(options.length > 0 && { options }), ...(command.guildId && { guild_id: command.guildId }) },
    };
    this.interactions.set(id, {
      id,
      type: 2,
      token,
      channelId: channel.id,
      userId: input.user.id,
      createdAt: this.world.now(),
      callbackType: null,
      flags: 0,
      messages: [],
    });
    this.dispatch('INTERACTION_CREATE', d);
    return id;
  }

  /** A person presses a button under a bot message (INTERACTION_CREATE type 3). Returns the interaction id. */
  pressButton(input: PressButtonInput, channelMessage: JsonObject | undefined): string {
    const channel = this.world.channel(input.channelId);
    const guildId = this.world.guildOf(channel);
    const message = channelMessage ?? this.interactionMessageJson(input.messageId);
    if (!message) throw new DiscordHttpError(404, 10008, 'Unknown Message');
    const rows = Array.isArray(message.components) ? message.components : [];
    const buttons = rows.flatMap((r) => (isObject(r) && Array.isArray(r.components) ? r.components.filter(isObject) : []));
    if (!buttons.some((b) => b.custom_id === input.customId)) throw new Error(`no button ${input.customId} under message ${input.messageId}`);
    this.world.addUser(input.user);
    const id = this.world.ids.next();
    const token = `aW50ZXJhY3Rpb24${id}${Math.random().toString(36).slice(2)}`;
    const d: JsonObject = {
      ...this.basePayload(id, token, channel, guildId, input.user),
      type: 3,
      data: { custom_id: input.customId, component_type: 2 },
      message,
    };
    this.interactions.set(id, {
      id,
      type: 3,
      customId: input.customId,
      messageId: input.messageId,
      token,
      channelId: channel.id,
      userId: input.user.id,
      createdAt: this.world.now(),
      callbackType: null,
      flags: 0,
      messages: [],
    });
    this.dispatch('INTERACTION_CREATE', d);
    return id;
  }

  private interactionMessageJson(messageId: string): JsonObject | undefined {
    for (const rec of this.interactions.values()) {
      const m = rec.messages.find((x) => x.id === messageId);
      if (m) return this.messageJson(rec, m);
    }
    return undefined;
  }

  private basePayload(id: string, token: string, channel: ReturnType<World['channel']>, guildId: string | undefined, user: FakeUser): JsonObject {
    const d: JsonObject = {
      id,
      application_id: this.world.bot.id,
      channel: channelJson(channel),
      channel_id: channel.id,
      token,
      version: 1,
      app_permissions: '2248473465835073',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: guildId ? { '0': guildId } : { '1': user.id },
      context: guildId ? 0 : 1,
      attachment_size_limit: 10 * 1024 * 1024,
    };
    if (guildId) {
      d.guild_id = guildId;
      d.guild_locale = 'en-US';
      d.member = { ...memberJson(new Date().toISOString()), user: userJson(user), permissions: '2248473465835073' };
    } else {
      d.user = userJson(user);
    }
    return d;
  }

  /** POST /interactions/{id}/{token}/callback. */
  callback(interactionId: string, token: string, body: JsonObject): void {
    const rec = this.interactions.get(interactionId);
    if (!rec || rec.token !== token) throw new DiscordHttpError(404, 10062, 'Unknown interaction');
    if (rec.callbackType !== null) throw new DiscordHttpError(400, 40060, 'Interaction has already been acknowledged.');
    if (this.world.now() - rec.createdAt > this.ackWindowMs) throw new DiscordHttpError(404, 10062, 'Unknown interaction');
    const type = body.type;
    const allowed: number[] = rec.type === 2 ? [CallbackType.ChannelMessage, CallbackType.DeferredChannelMessage] : Object.values(CallbackType);
    if (typeof type !== 'number' || !allowed.includes(type)) {
      throw fieldError('type', 'BASE_TYPE_CHOICES', `Value must be one of {${allowed.join(', ')}}.`);
    }
    const data = isObject(body.data) ? body.data : {};
    rec.callbackType = type;
    rec.flags = typeof data.flags === 'number' ? data.flags & EPHEMERAL : 0;
    if (type === CallbackType.ChannelMessage) {
      rec.messages.push({ id: this.world.ids.next(), content: this.content(data), flags: rec.flags, via: 'callback' });
    }
  }

  /** PATCH /webhooks/{app}/{token}/messages/@original: fills in (or edits) the response. */
  editOriginal(appId: string, token: string, body: JsonObject): JsonObject {
    const rec = this.byToken(appId, token);
    if (rec.callbackType === null) throw new DiscordHttpError(404, 10008, 'Unknown Message');
    const content = this.content(body);
    const components = componentsOf(body);
    const original = rec.messages.find((m) => m.via !== 'followup');
    if (original) {
      original.content = content;
      original.via = 'original';
      if (components) original.components = components;
      return this.messageJson(rec, original);
    }
    const m: InteractionMessage = { id: this.world.ids.next(), content, flags: rec.flags, via: 'original', ...(components && { components }) };
    rec.messages.push(m);
    return this.messageJson(rec, m);
  }

  /** POST /webhooks/{app}/{token}: a follow-up message. */
  followUp(appId: string, token: string, body: JsonObject): JsonObject {
    const rec = this.byToken(appId, token);
    if (rec.callbackType === null) throw new DiscordHttpError(404, 10015, 'Unknown Webhook');
    const flags = typeof body.flags === 'number' ? body.flags & EPHEMERAL : 0;
    const components = componentsOf(body);
    const m: InteractionMessage = { id: this.world.ids.next(), content: this.content(body), flags, via: 'followup', ...(components && { components }) };
    rec.messages.push(m);
    return this.messageJson(rec, m);
  }

  private byToken(appId: string, token: string): InteractionRecord {
    this.checkApp(appId);
    const rec = [...this.interactions.values()].find((r) => r.token === token);
    if (!rec) throw new DiscordHttpError(404, 10015, 'Unknown Webhook');
    if (this.world.now() - rec.createdAt > INTERACTION_TOKEN_TTL_MS) throw new DiscordHttpError(401, 50027, 'Invalid Webhook Token');
    return rec;
  }

  private content(body: JsonObject): string {
    const content = typeof body.content === 'string' ? body.content : '';
    if (content.length > 2000) throw fieldError('content', 'BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.');
    if (content.trim() === '') throw new DiscordHttpError(400, 50006, 'Cannot send an empty message');
    return content;
  }

  private messageJson(rec: InteractionRecord, m: InteractionMessage): JsonObject {
    return {
      components: m.components ?? [],
      id: m.id,
      channel_id: rec.channelId,
      type: 20,
      content: m.content,
      author: userJson(this.world.bot),
      flags: m.flags,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      webhook_id: this.world.bot.id,
      application_id: this.world.bot.id,
      interaction_metadata: { id: rec.id, type: 2, user: userJson(this.world.users.get(rec.userId) ?? this.world.bot) },
    };
  }

  private checkApp(appId: string): void {
    if (appId !== this.world.bot.id) throw new DiscordHttpError(404, 10002, 'Unknown Application');
  }

  private readCommand(raw: unknown, i: number, guildId: string | undefined): RegisteredCommand {
    if (!isObject(raw)) throw fieldError(`${i}`, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    const { name, description } = raw;
    if (typeof name !== 'string' || !NAME_RE.test(name)) throw fieldError(`${i}.name`, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
    if (typeof description !== 'string' || description.length < 1 || description.length > 100) {
      throw fieldError(`${i}.description`, 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    }
    const options = Array.isArray(raw.options) ? raw.options.filter(isObject) : [];
    for (const [j, o] of options.entries()) {
      if (typeof o.name !== 'string' || !NAME_RE.test(o.name))
        throw fieldError(`${i}.options.${j}.name`, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
      if (typeof o.description !== 'string' || o.description.length < 1 || o.description.length > 100) {
        throw fieldError(`${i}.options.${j}.description`, 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
      }
    }
    const existing = this.registered.find((c) => c.name === name && c.guildId === guildId);
    return { id: existing?.id ?? this.world.ids.next(), name, description, options, ...(guildId !== undefined && { guildId }) };
  }

  private commandJson(c: RegisteredCommand): JsonObject {
    return {
      id: c.id,
      application_id: this.world.bot.id,
      version: c.id,
      default_member_permissions: null,
      type: 1,
      name: c.name,
      description: c.description,
      options: c.options,
      nsfw: false,
      ...(c.guildId !== undefined && { guild_id: c.guildId }),
    };
  }
}

/**
 * Action rows of buttons, checked as Discord does: at most 5 rows of 5, labels up to 80 characters, custom_id 1-100
 * characters and unique in the message.
 */
export function componentsOf(body: JsonObject): JsonObject[] | undefined {
  if (body.components === undefined) return undefined;
  const rows = Array.isArray(body.components) ? body.components.filter(isObject) : [];
  if (rows.length > 5) throw fieldError('components', 'BASE_TYPE_BAD_LENGTH', 'Must be between 0 and 5 in length.');
  const ids = new Set<string>();
  for (const [i, row] of rows.entries()) {
    const buttons = Array.isArray(row.components) ? row.components.filter(isObject) : [];
    if (row.type !== 1 || buttons.length < 1 || buttons.length > 5)
      throw fieldError(`components.${i}`, 'BASE_TYPE_BAD_LENGTH', 'An action row holds 1 to 5 components.');
    for (const [j, b] of buttons.entries()) {
      const id = b.custom_id;
      if (typeof id !== 'string' || id.length < 1 || id.length > 100 || ids.has(id))
        throw fieldError(`components.${i}.components.${j}.custom_id`, 'COMPONENT_CUSTOM_ID_INVALID', 'custom_id must be 1-100 characters and unique.');
      if (typeof b.label === 'string' && b.label.length > 80)
        throw fieldError(`components.${i}.components.${j}.label`, 'BASE_TYPE_MAX_LENGTH', 'Must be 80 or fewer in length.');
      ids.add(id);
    }
  }
  return rows;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
