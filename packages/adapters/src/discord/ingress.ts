/**
 * Discord ingress: one discord.js Client on the gateway WebSocket. Reconnecting and resuming are discord.js's;
 * this file decides which messages to take, opens threads for mentions, drops replayed events and reports health.
 */
import { once } from 'node:events';
import { Client, DiscordAPIError, Events, GatewayIntentBits, Options, Partials, ThreadAutoArchiveDuration, type CloseEvent, type Message } from 'discord.js';
import { AuthError, NetworkError, type PlatformError } from '../errors.js';
import type { AdapterHealth, AdapterState, InboundHandler, PlatformIngress } from '../types.js';
import { DISCORD_DEDUPE_CAPACITY, DISCORD_PRIVILEGED_INTENT_HINT, DISCORD_SILENCE_LIMIT_MS, type DiscordIngressOptions } from './config.js';
import { viewOf } from './message-view.js';
import { decide, placementOf, threadNameFor, toInbound, type DiscordPolicy, type MessageView } from './normalize.js';
import { InFlight } from '../shared/in-flight.js';
import { KeyedSerial } from '../shared/keyed-serial.js';
import { RecentIds } from '../shared/recent-ids.js';
import { DiscordErrorCode } from './rest-errors.js';
import { createDiscordRest } from './rest.js';
import { registerApplicationCommands, takeButtonPress, takeCommandInteraction } from './interaction-ingress.js';

/** Gateway close codes after which discord.js gives up (see Discord's opcodes-and-status-codes page). */
const CLOSE_AUTHENTICATION_FAILED = 4004;
const CLOSE_DISALLOWED_INTENTS = 4014;
const FATAL_CLOSE_CODES = new Set([4004, 4010, 4011, 4012, 4013, 4014]);

const INTENTS = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages, GatewayIntentBits.MessageContent];
/** DM channels are never in the cache when their first message arrives; without Partials.Channel discord.js drops it. */
const PARTIALS = [Partials.Channel, Partials.Message];
/**
 * Messages discord.js keeps per channel. Nothing reads history from this cache: the only message we look up is the
 * one a reply quotes, which arrives inside the reply and is read at once. A small cache keeps memory flat over
 * thousands of channels; replay dedupe is RecentIds' job, not the cache's.
 */
const MESSAGE_CACHE_PER_CHANNEL = 10;

/** The parts of discord.js' WebSocketManager its typings leave out: every gateway event goes through handlePacket. */
interface ManagerInternals {
  handlePacket(packet: unknown, shard: unknown): boolean;
  on(event: 'error', listener: (...args: unknown[]) => void): unknown;
}

export interface DiscordIngress extends PlatformIngress {
  readonly platform: 'discord';
}

export function createDiscordIngress(opts: DiscordIngressOptions): DiscordIngress {
  return new DiscordGatewayIngress(opts);
}

class DiscordGatewayIngress implements DiscordIngress {
  readonly platform = 'discord' as const;
  private readonly log;
  private client: Client | null = null;
  private handler: InboundHandler | null = null;
  private state: AdapterState = 'disconnected';
  private lastEventAt: number | null = null;
  /** When the state last became connected: the silence check counts from here until the first ACK. */
  private connectedAt = 0;
  private lastError: string | null = null;
  private lastCloseCode: number | null = null;
  private readonly seen = new RecentIds(DISCORD_DEDUPE_CAPACITY);
  /**
   * Per channel, what we do before the hand-over (thread lookups, opening a thread) runs in arrival order, so a
   * message that awaits a thread is not overtaken by the next one. The hand-over itself is ordered (and retried)
   * by the gateway; `handing` holds the ones still in progress, for stop().
   */
  private readonly preparing = new KeyedSerial();
  private readonly handing = new InFlight();
  private readonly freeResponseChannels: ReadonlySet<string>;

  constructor(private readonly opts: DiscordIngressOptions) {
    this.log = opts.logger.child({ platform: 'discord', part: 'ingress' });
    this.freeResponseChannels = new Set(opts.freeResponseChannels ?? []);
  }

  async start(handler: InboundHandler): Promise<void> {
    if (this.client) throw new Error('Discord ingress is already started');
    this.handler = handler;
    this.lastCloseCode = null;
    const client = new Client({
      intents: INTENTS,
      partials: PARTIALS,
      makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: MESSAGE_CACHE_PER_CHANNEL }),
    });
    // The bot's one REST client instead of the one discord.js built, unused so far: its sweep timers stop with it.
    client.rest.clearHashSweeper();
    client.rest.clearHandlerSweeper();
    client.rest = this.opts.rest ?? createDiscordRest(this.opts);
    this.client = client;
    this.wire(client);
    this.setState('connecting', null);

    // Registered before login(): READY and the guilds can arrive before login() resolves.
    const abort = new AbortController();
    const ready = once(client, Events.ClientReady, { signal: abort.signal });
    try {
      await Promise.all([client.login(this.opts.botToken), ready]);
    } catch (err) {
      abort.abort();
      const explained = this.explainStartFailure(err);
      this.setState('fatal', explained.message);
      this.client = null;
      await client.destroy().catch(() => undefined);
      throw explained;
    }
    this.setState('connected', null);
    this.log.info({ botId: client.user?.id, guilds: client.guilds.cache.size }, 'discord gateway ready');
    await registerApplicationCommands(client, this.opts.commands ?? [], this.opts.slashCommands ?? { enabled: true, guildIds: [] }, this.log);
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) await client.destroy();
    await this.preparing.idle();
    await this.handing.settled();
    this.setState('disconnected', null);
  }

  health(): AdapterHealth {
    const silentMs = Date.now() - this.lastSignOfLife();
    if (this.state === 'connected' && silentMs > (this.opts.silenceLimitMs ?? DISCORD_SILENCE_LIMIT_MS)) {
      const error = `no gateway event or heartbeat ACK for ${Math.round(silentMs / 1000)} s`;
      return { state: 'disconnected', lastEventAt: this.lastEventAt, error };
    }
    return { state: this.state, lastEventAt: this.lastEventAt, error: this.lastError };
  }

  /** The latest proof the connection is alive: connecting, any event, or an ACKed heartbeat (sent-at time). */
  private lastSignOfLife(): number {
    const acks = this.client ? [...this.client.ws.shards.values()].map((s) => s.lastPingTimestamp) : [];
    return Math.max(this.connectedAt, this.lastEventAt ?? 0, ...acks);
  }

  private setState(state: AdapterState, error: string | null | undefined): void {
    if (state === 'connected') this.connectedAt = Date.now();
    this.state = state;
    if (error !== undefined) this.lastError = error;
  }

  private wire(client: Client): void {
    this.dropUnreadableEvents(client);
    client.on(Events.Raw, () => {
      this.lastEventAt = Date.now();
    });
    client.on(Events.ShardReady, () => this.setState('connected', null));
    client.on(Events.ShardResume, (_shard, replayed) => {
      this.setState('connected', null);
      this.log.info({ replayed }, 'discord gateway resumed');
    });
    client.on(Events.ShardReconnecting, () => this.setState('connecting', undefined));
    client.on(Events.ShardDisconnect, (event: CloseEvent) => {
      this.lastCloseCode = event.code;
      const fatal = FATAL_CLOSE_CODES.has(event.code);
      this.setState(fatal ? 'fatal' : 'disconnected', `gateway closed with code ${event.code}`);
      this.log.warn({ code: event.code }, fatal ? 'discord gateway closed for good' : 'discord gateway disconnected');
    });
    client.on(Events.ShardError, (err) => {
      this.lastError = err.message;
      this.log.warn({ err: err.message }, 'discord gateway error');
    });
    client.on(Events.Invalidated, () => this.setState('fatal', 'discord session invalidated'));
    // An 'error' event without a listener would throw and take the process down.
    client.on(Events.Error, (err) => this.log.error({ err: err.message }, 'discord client error'));
    client.on(Events.MessageCreate, (message) => this.onMessage(message));
    client.on(Events.InteractionCreate, (interaction) => {
      const handler = this.handler;
      if (handler === null || !this.seen.add(interaction.id)) return;
      const take = interaction.isButton() ? takeButtonPress : takeCommandInteraction;
      // Never an unhandled rejection: an interaction discord.js could build but we cannot read is logged and dropped.
      const taken = take(interaction, handler, this.log).catch((err: unknown) => {
        this.log.warn({ err: errorText(err), interactionId: interaction.id }, 'discord interaction unreadable; dropped');
      });
      void this.handing.track(taken);
    });
  }

  /**
   * discord.js reads gateway events without checking their shape: a MESSAGE_CREATE whose `d` is null, or whose
   * author is a number, throws inside its packet handler, which @discordjs/ws calls from a promise nobody awaits —
   * an unhandled rejection. Every event goes through the manager's `handlePacket` (not in discord.js' typings), so
   * that is where such an event is dropped, with a log line. The manager also re-emits each event under its own
   * name, and an event named `error` with no listener would throw.
   */
  private dropUnreadableEvents(client: Client): void {
    const manager = client.ws as unknown as ManagerInternals;
    const handle = manager.handlePacket.bind(manager);
    manager.handlePacket = (packet, shard) => {
      try {
        return handle(packet, shard);
      } catch (err) {
        const event = typeof packet === 'object' && packet !== null ? (packet as { t?: unknown }).t : undefined;
        this.log.warn({ err: errorText(err), event: String(event) }, 'discord gateway event unreadable; dropped');
        return true;
      }
    };
    manager.on('error', () => undefined);
  }

  private explainStartFailure(err: unknown): PlatformError {
    const message = err instanceof Error ? err.message : String(err);
    if (this.lastCloseCode === CLOSE_DISALLOWED_INTENTS || /disallowed intents/i.test(message)) {
      return new AuthError(
        'Discord refused the gateway connection: the bot asks for the privileged Message Content intent, which is ' +
          'not enabled for it (close code 4014, "Disallowed intent(s)"). ' +
          `Enable it in the ${DISCORD_PRIVILEGED_INTENT_HINT}, then restart.`,
        'discord',
        { cause: err },
      );
    }
    const badToken =
      this.lastCloseCode === CLOSE_AUTHENTICATION_FAILED ||
      (err instanceof DiscordAPIError && err.status === 401) ||
      (typeof err === 'object' && err !== null && 'code' in err && err.code === 'TokenInvalid') ||
      /authentication failed/i.test(message);
    if (badToken) {
      return new AuthError(
        'Discord rejected the bot token (DISCORD_BOT_TOKEN): check it in the Discord Developer Portal → ' + 'your application → Bot → Reset Token.',
        'discord',
        { cause: err },
      );
    }
    return new NetworkError(`Discord gateway connection failed: ${message}`, 'discord', { cause: err });
  }

  private onMessage(message: Message): void {
    const botId = this.client?.user?.id;
    if (!botId) return;
    if (!this.seen.add(message.id)) {
      this.log.debug({ messageId: message.id }, 'discord message seen before (replayed); dropped');
      return;
    }
    // Snapshot now: the quoted message sits in a small cache that later messages of a busy channel would evict.
    let view: MessageView;
    try {
      view = viewOf(message, botId);
    } catch (err) {
      this.log.error({ err: errorText(err), messageId: message.id }, 'discord message unreadable');
      return;
    }
    void this.preparing.run(message.channelId, () => this.process(message, view, botId));
  }

  /**
   * Never rejects: a failure is logged and the id forgotten, so a redelivery can still be taken. Runs to the end
   * even during stop(), which waits for it: a message already read is still handed over.
   */
  private async process(message: Message, view: MessageView, botId: string): Promise<void> {
    const handler = this.handler;
    if (!handler) return;
    const failed = (err: unknown): void => {
      this.seen.delete(message.id);
      this.log.error({ err: errorText(err), messageId: message.id }, 'discord message not handed over');
    };
    try {
      const participating = view.channelKind === 'thread' ? await this.opts.threads.has(view.channelId) : false;
      const decision = decide(view, this.policy(botId), participating);
      if (!decision.take) {
        this.log.debug({ messageId: view.id, reason: decision.reason }, 'discord message ignored');
        return;
      }
      const openedThreadId = decision.openThread ? await this.openThread(message, view, botId) : undefined;
      if (openedThreadId !== undefined) await this.opts.threads.add(openedThreadId);
      if (decision.joinThread) await this.opts.threads.add(view.channelId);
      // Handed over in this order; not awaited, so a retried hand-over does not hold up the channel's next message.
      void this.handing.track(handler(toInbound(view, botId, placementOf(view, openedThreadId))).catch(failed));
    } catch (err) {
      failed(err);
    }
  }

  private policy(botId: string): DiscordPolicy {
    return {
      botId,
      requireMention: this.opts.requireMention ?? true,
      autoThread: this.opts.autoThread ?? true,
      freeResponseChannels: this.freeResponseChannels,
      allowBots: this.opts.allowBots ?? 'none',
    };
  }

  /** Opens a thread on the message; undefined (answer in the channel) when Discord refuses, e.g. without permission. */
  private async openThread(message: Message, view: MessageView, botId: string): Promise<string | undefined> {
    try {
      const thread = await message.startThread({
        name: threadNameFor(view, botId),
        // A day of silence before Discord archives it: long enough for a conversation to pause and resume.
        autoArchiveDuration: ThreadAutoArchiveDuration.OneDay,
      });
      return thread.id;
    } catch (err) {
      // A thread started from a message takes the message's id, so an existing one is easy to find.
      if (err instanceof DiscordAPIError && err.code === DiscordErrorCode.ThreadAlreadyCreated) return message.id;
      const context = { err: errorText(err), channelId: view.channelId };
      this.log.warn(context, 'discord thread not created; answering in the channel');
      return undefined;
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
