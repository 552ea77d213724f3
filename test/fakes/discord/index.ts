/**
 * A protocol-faithful Discord stand-in on 127.0.0.1: REST under `/v10` and the gateway WebSocket on the same port.
 *
 *   const discord = await startDiscordFake();
 *   // DISCORD_API_URL = discord.apiRoot, DISCORD_BOT_TOKEN = discord.token
 *   const { generalChannelId, alice } = discord.fixtures;
 *   discord.postUserMessage({ channelId: generalChannelId, author: alice, content: `<@${discord.bot.id}> hi` });
 *   await vi.waitFor(() => expect(discord.sent).toHaveLength(1));
 *   await discord.close();
 */
import { FakeCdn } from './cdn.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeGateway, type DropOptions } from './gateway.js';
import { ChannelTypes, Snowflakes, type FakeUser, type JsonObject } from './model.js';
import { createRestHandler, type FailureSpec, type RestRecords, type RestRoute } from './rest.js';
import { World, type UserMessageInput } from './world.js';
import { DISCORD_DEFAULT_UPLOAD_LIMIT_BYTES } from './uploads.js';
import { FakeInteractions, type InvokeCommandInput, type PressButtonInput } from './interactions.js';

export type { FakeUser, JsonObject } from './model.js';
export type { FailureSpec, RestRoute, SentRecord } from './rest.js';
export type { UserMessageInput } from './world.js';
export type { DropOptions } from './gateway.js';
export type { InteractionMessage, InteractionRecord, InvokeCommandInput, PressButtonInput, RegisteredCommand } from './interactions.js';
export { CloseCode } from './gateway.js';

export const DEFAULT_DISCORD_FAKE_TOKEN = 'fake-discord-bot-token';
/** Discord's real interval; clients jitter the first beat, so a long one keeps tests quiet. */
const DEFAULT_HEARTBEAT_MS = 41_250;

export interface DiscordFakeOptions {
  token?: string;
  botName?: string;
  heartbeatIntervalMs?: number;
  /** Whether the Message Content intent is enabled for the app (false: IDENTIFY asking for it closes with 4014). */
  messageContentIntent?: boolean;
  /** How long `enforce_nonce` finds an earlier message with the same nonce (Discord: "a few minutes"). */
  nonceWindowMs?: number;
  /** Upload limit per message (default Discord's 10 MiB); tests shrink it to hit the 413 cheaply. */
  uploadLimitBytes?: number;
}

export interface DiscordFakeFixtures {
  guildId: string;
  /** A text channel where threads can be started. */
  generalChannelId: string;
  /** A second text channel, e.g. for `freeResponseChannels`. */
  freeChannelId: string;
  /** A voice channel (its text chat cannot hold threads). */
  voiceChannelId: string;
  /** The bot's managed role in the guild. */
  botRoleId: string;
  alice: FakeUser;
  bob: FakeUser;
  otherBot: FakeUser;
}

/** Ready-made failures in Discord's own shapes, for `failNext`. */
export const discordFailures = {
  rateLimited: (retryAfterSeconds: number, global = false): FailureSpec => ({
    status: 429,
    retryAfter: retryAfterSeconds,
    global,
  }),
  unknownChannel: (): FailureSpec => ({ status: 404, code: 10003, message: 'Unknown Channel' }),
  unknownMessage: (): FailureSpec => ({ status: 404, code: 10008, message: 'Unknown Message' }),
  missingPermissions: (): FailureSpec => ({ status: 403, code: 50013, message: 'Missing Permissions' }),
  replyReferenceRefused: (): FailureSpec => ({
    status: 400,
    code: 50035,
    message: 'Invalid Form Body',
    errors: { message_reference: { _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', message: 'Unknown message' }] } },
  }),
  serverError: (): FailureSpec => ({ status: 500, code: 0, message: '500: Internal Server Error' }),
  tooLarge: (): FailureSpec => ({ status: 413, code: 40005, message: 'Request entity too large' }),
};

export interface DiscordFake extends RestRecords {
  /** http://127.0.0.1:<port> */
  url: string;
  /** What to pass as DISCORD_API_URL / the REST `api` option (routes live under `/v10`). */
  apiRoot: string;
  /** ws://127.0.0.1:<port>, as returned by GET /gateway/bot. */
  gatewayUrl: string;
  token: string;
  bot: FakeUser;
  fixtures: DiscordFakeFixtures;
  world: World;
  /** Attachment files, served like Discord's CDN (cdn.ts). */
  cdn: FakeCdn;
  /** Application commands and interactions (interactions.ts). */
  interactions: FakeInteractions;
  /** A person runs a registered slash command (INTERACTION_CREATE); returns the interaction id. */
  invokeCommand(input: InvokeCommandInput): string;
  /** A person presses a button under a bot message (INTERACTION_CREATE type 3); returns the interaction id. */
  pressButton(input: PressButtonInput): string;
  /** A person writes; returns the MESSAGE_CREATE payload. Attachments with `content` are put on the CDN. */
  postUserMessage(input: UserMessageInput): JsonObject;
  /** The DM channel between the bot and this user. */
  openDm(user: FakeUser): string;
  /** A person opens a thread in a text channel (THREAD_CREATE); returns the thread id. */
  createUserThread(parentId: string, name: string, owner: FakeUser): string;
  /** The next call of `route` fails with this (queued: several calls fail in order). */
  failNext(route: RestRoute, failure: FailureSpec): void;
  /** Sends any event name with any payload, in sequence, to every session (fuzzing the client's reading of events). */
  dispatchRaw(eventName: string, d: unknown): void;
  /** Sends one text frame as given on every live connection, outside the sequence. */
  sendRaw(frame: string): void;
  /** Asks every live connection for a heartbeat (opcode 1); resolves when each has answered. */
  requestHeartbeat(): Promise<void>;
  /** Closes live gateway connections (the client resumes). */
  dropConnections(opts?: DropOptions): number;
  /** Sends the last `count` events of a kind (default MESSAGE_CREATE) again on live connections. */
  replayLast(count?: number, eventName?: string): void;
  /** The next IDENTIFY is closed with this code (4014 disallowed intents, 4004 authentication failed). */
  rejectNextIdentify(code: number): void;
  /** false: refuse gateway connections (HTTP 503 on upgrade) until set back. */
  setGatewayAvailable(available: boolean): void;
  /** Switches the app's Message Content intent in the "Developer Portal" (applies to the next IDENTIFY). */
  setMessageContentIntent(enabled: boolean): void;
  /** Moves the stand-in's clock ahead (e.g. past the nonce window) without waiting. */
  advanceClock(ms: number): void;
  readonly identifyCount: number;
  readonly resumeCount: number;
  readonly liveConnections: number;
  close(): Promise<void>;
}

export async function startDiscordFake(opts: DiscordFakeOptions = {}): Promise<DiscordFake> {
  const token = opts.token ?? DEFAULT_DISCORD_FAKE_TOKEN;
  const ids = new Snowflakes();
  const bot: FakeUser = { id: ids.next(), username: opts.botName ?? 'herald', bot: true };
  let gateway: FakeGateway | null = null;
  const world = new World(bot, ids, (t, d, audience) => gateway?.dispatch(t, d, audience), {
    ...(opts.nonceWindowMs !== undefined && { nonceWindowMs: opts.nonceWindowMs }),
  });
  const alice = world.addUser({ id: ids.next(), username: 'alice', globalName: 'Alice' });
  const bob = world.addUser({ id: ids.next(), username: 'bob', globalName: 'Bob' });
  const otherBot = world.addUser({ id: ids.next(), username: 'otherbot', bot: true });
  const guild = world.addGuild('Herald Test');
  const fixtures: DiscordFakeFixtures = {
    guildId: guild.id,
    generalChannelId: world.addChannel(guild.id, 'general').id,
    freeChannelId: world.addChannel(guild.id, 'free-chat').id,
    voiceChannelId: world.addChannel(guild.id, 'Lounge', ChannelTypes.GuildVoice).id,
    botRoleId: world.botRole(guild.id) ?? guild.id,
    alice,
    bob,
    otherBot,
  };

  const records: RestRecords = { sent: [], edits: [], threadsCreated: [], typingCalls: [], reactions: [], requests: [] };
  const failures = new Map<RestRoute, FailureSpec[]>();
  let url = '';
  const gatewayUrl = (): string => url.replace(/^http/, 'ws');
  let messageContentAllowed = opts.messageContentIntent ?? true;
  const gw = new FakeGateway({
    world,
    token,
    heartbeatIntervalMs: opts.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS,
    messageContentAllowed: () => messageContentAllowed,
    url: gatewayUrl,
  });
  gateway = gw;

  const uploadLimitBytes = opts.uploadLimitBytes ?? DISCORD_DEFAULT_UPLOAD_LIMIT_BYTES;
  const cdn = new FakeCdn(() => url);
  const interactions = new FakeInteractions(world, (t, d) => gw.dispatchRaw(t, d));
  const rest = createRestHandler({ world, token, gatewayUrl, records, failures, uploadLimitBytes, interactions, refreshUrl: (u) => cdn.refresh(u) });
  const server: Server = createServer((req, res) => void (cdn.handle(req, res) || rest(req, res)));
  server.on('upgrade', (req, socket, head) => gw.handleUpgrade(req, socket, head));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    ...records,
    url,
    apiRoot: url,
    gatewayUrl: gatewayUrl(),
    token,
    bot,
    fixtures,
    world,
    cdn,
    interactions,
    invokeCommand: (input) => interactions.invokeCommand(input),
    pressButton: (input) =>
      interactions.pressButton(
        input,
        world.messages.get(input.messageId)?.channelId === input.channelId ? world.messages.get(input.messageId)?.json : undefined,
      ),
    postUserMessage: (input) =>
      world.postUserMessage({
        ...input,
        // Files with content go to the CDN, and the message carries their signed URL.
        attachments: input.attachments?.map(({ content, ...a }) =>
          content === undefined ? a : { ...a, size: a.size ?? content.length, url: a.url ?? cdn.put(input.channelId, a.filename, content, a.contentType) },
        ),
      }),
    openDm: (user) => world.openDm(user).id,
    createUserThread: (parentId, name, owner) => String(world.createThread(world.channel(parentId), ids.next(), name, owner).id),
    failNext(route, failure) {
      const queue = failures.get(route) ?? [];
      queue.push(failure);
      failures.set(route, queue);
    },
    dispatchRaw: (eventName, d) => gw.dispatchRaw(eventName, d),
    sendRaw: (frame) => gw.sendRaw(frame),
    requestHeartbeat: () => gw.requestHeartbeat(),
    dropConnections: (dropOpts) => gw.drop(dropOpts),
    replayLast: (count, eventName) => gw.replayLast(count, eventName),
    rejectNextIdentify: (code) => gw.rejectNextIdentify(code),
    setGatewayAvailable(available) {
      gw.available = available;
    },
    setMessageContentIntent(enabled) {
      messageContentAllowed = enabled;
    },
    advanceClock: (ms) => world.advanceClock(ms),
    get identifyCount() {
      return gw.identifyCount;
    },
    get resumeCount() {
      return gw.resumeCount;
    },
    get liveConnections() {
      return gw.liveConnections;
    },
    async close() {
      await gw.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
