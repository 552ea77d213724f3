/**
 * Slack ingress: a Bolt App on Socket Mode (app token) or on Events over HTTP (signing secret, fastify route).
 *
 * Both transports feed the same Bolt middleware: dedupe retried deliveries by `event_id`, then classify
 * `message` / `app_mention` events (normalize.ts), dedupe the pair Slack sends for one mention by channel+ts,
 * consult thread memory, and hand the InboundMessage to the gateway. The event is acknowledged to Slack only once
 * that hand-over succeeded (ack-gate.ts): each hand-over is remembered, per event_id and per message, so a
 * redelivery joins the one still running (or finds it done) instead of starting another, and one that failed is
 * forgotten, so the redelivery hands the message over again.
 */
import { App, type Middleware, type AnyMiddlewareArgs } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AuthError } from '../errors.js';
import type { AdapterHealth, InboundHandler, InboundMessage, PlatformIngress } from '../types.js';
import { SLACK_ACK_BUDGET_MS, SLACK_DEDUPE_CAPACITY, SLACK_DEFAULT_API_URL, type SlackIngressOptions } from './config.js';
import { deliveryOf, type EventDelivery } from './ack-gate.js';
import { commandAnswerOf, GATED_COMMAND, GATED_PRESS, outcomeWithin, PendingGated, queuesMessage, type CommandAnswer, type GatedKind } from './command-gate.js';
import { HandOverMemory } from '../shared/hand-overs.js';
import { FastifyEventsReceiver } from './events-http.js';
import { InFlight } from '../shared/in-flight.js';
import { KeyedSerial } from '../shared/keyed-serial.js';
import { classifySlackEvent, type SlackIdentity } from './normalize.js';
import { SLACK_PER_COMMAND_PREFIX, SLACK_SLASH_COMMAND, slashCommandToMessage } from './slash-command.js';
import { SLACK_BUTTON_ACTION_PREFIX } from './blocks.js';
import { pressToMessage } from './press.js';
import { homeOpenedToMessage } from './home.js';
import { createSlackClient, slackAuthTest, slackClientOptions } from './client.js';
import { toPlatformError } from './slack-errors.js';
import { toSlackLogger } from './slack-logger.js';
import { SocketTransport } from './socket-mode.js';

export type SlackTransport = 'socket' | 'http';

export interface SlackIngressHealth extends AdapterHealth {
  transport: SlackTransport;
  /** Socket Mode connections re-established after a drop. */
  reconnects: number;
}

export interface SlackIngress extends PlatformIngress {
  readonly transport: SlackTransport;
  /** Adds `POST /slack/events` or the app's `eventsPath` (Events over HTTP). A no-op in Socket Mode. Call before the server listens. */
  registerRoutes(app: FastifyInstance): void;
  health(): SlackIngressHealth;
  /** Bot identity from auth.test, known after start(). */
  readonly identity: (SlackIdentity & { teamId?: string }) | null;
}

export function createSlackIngress(opts: SlackIngressOptions): SlackIngress {
  return new SlackIngressImpl(opts);
}

class SlackIngressImpl implements SlackIngress {
  readonly platform = 'slack' as const;
  readonly transport: SlackTransport;
  identity: (SlackIdentity & { teamId?: string }) | null = null;

  private readonly logger: Logger;
  private readonly apiUrl: string;
  /** The bot's one Web API client, shared with its egress and files when the gateway passes it. */
  private readonly client: WebClient;
  /** Per event_id and per message (channel+ts): the hand-over it started, running or done. */
  private readonly seenEvents: HandOverMemory<string>;
  private readonly seenMessages: HandOverMemory<string>;
  private readonly http: FastifyEventsReceiver | null;
  private readonly socket: SocketTransport | null;
  private app: App | null = null;
  private handler: InboundHandler | null = null;
  private state: AdapterHealth['state'] = 'disconnected';
  private lastEventAt: number | null = null;
  private lastError: string | null = null;
  /** Per conversation, what runs before the hand-over; and the hand-overs still in progress (for stop). */
  private readonly preparing = new KeyedSerial();
  private readonly handing = new InFlight();
  /** Slash commands that queue a message and were not acknowledged yet, so a retyped one joins (command-gate.ts). */
  private readonly pendingGated = new PendingGated();
  private readonly ackBudgetMs: number;

  constructor(private readonly opts: SlackIngressOptions) {
    this.logger = opts.logger.child({ platform: 'slack' });
    this.apiUrl = opts.apiUrl ?? SLACK_DEFAULT_API_URL;
    this.client = opts.client ?? createSlackClient({ ...opts, logger: this.logger });
    const capacity = opts.dedupeCapacity ?? SLACK_DEDUPE_CAPACITY;
    this.seenEvents = new HandOverMemory<string>(capacity);
    this.seenMessages = new HandOverMemory<string>(capacity);
    const ackBudgetMs = opts.ackBudgetMs ?? SLACK_ACK_BUDGET_MS;
    this.ackBudgetMs = ackBudgetMs;
    if (opts.appToken) {
      this.transport = 'socket';
      this.http = null;
      this.socket = new SocketTransport({
        appToken: opts.appToken,
        apiUrl: this.apiUrl,
        logger: this.logger,
        clientOptions: opts.clientOptions,
        clientPingTimeoutMs: opts.socketMode?.clientPingTimeoutMs,
        serverPingTimeoutMs: opts.socketMode?.serverPingTimeoutMs,
        reconnectRetryMs: opts.socketMode?.reconnectRetryMs,
        ackBudgetMs,
      });
    } else if (opts.signingSecret) {
      this.transport = 'http';
      this.socket = null;
      this.http = new FastifyEventsReceiver(opts.signingSecret, this.logger, opts.eventsPath, ackBudgetMs);
    } else {
      throw new Error('Slack ingress needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (Events over HTTP)');
    }
  }

  registerRoutes(fastify: FastifyInstance): void {
    if (this.http === null) {
      this.logger.debug('slack: Socket Mode, no HTTP route to register');
      return;
    }
    this.http.registerRoutes(fastify);
  }

  async start(handler: InboundHandler): Promise<void> {
    if (this.app !== null) throw new Error('Slack ingress already started');
    this.handler = handler;
    this.state = 'connecting';
    const identity = await this.whoAmI();
    this.identity = identity;

    const receiver = this.socket?.receiver ?? this.http;
    if (receiver === null) throw new Error('unreachable: no Slack receiver');
    const app = new App({
      receiver,
      socketMode: this.socket !== null,
      token: this.opts.botToken,
      // Passing both skips Bolt's own auth.test; we already made it.
      botId: identity.botId,
      botUserId: identity.botUserId,
      logger: toSlackLogger(this.logger),
      // Bolt builds its own clients (it takes no client object); they get the options of the bot's one client.
      clientOptions: slackClientOptions({ apiUrl: this.apiUrl, logger: this.logger, clientOptions: this.opts.clientOptions }),
      convoStore: false,
    });
    app.use(this.dedupeRetries);
    app.event('message', async ({ event, context }) => this.onEvent(event, deliveryOf(context)));
    app.event('app_mention', async ({ event, context }) => this.onEvent(event, deliveryOf(context)));
    // The App Home tab: the gateway answers /status for the user's DM, shown as the tab's view. Nothing is queued,
    // so its event is acknowledged without waiting for the answer.
    app.event('app_home_opened', async ({ event }) => void this.handing.track(this.onHomeOpened(event)));
    // Slack wants the ack within 3 s; the answer follows as a normal message once the gateway has it. A command
    // that queues a message is acknowledged only once that message was handed over (command-gate.ts).
    app.command(SLACK_SLASH_COMMAND, async ({ command, ack, context }) => this.onSlashCommand(command, ack, commandAnswerOf(context)));
    if (this.opts.slashCommands === 'each') {
      for (const name of (this.opts.commands ?? []).flatMap((c) => [c.name, ...(c.aliases ?? [])])) {
        app.command(`${SLACK_PER_COMMAND_PREFIX}${name}`, async ({ command, ack, context }) =>
          this.onSlashCommand(command, ack, commandAnswerOf(context), name),
        );
      }
    }
    // Button presses (block_actions): acknowledged once handed over, as a command that queues (command-gate.ts); the
    // gateway decides whether the press still counts.
    app.action(new RegExp(`^${SLACK_BUTTON_ACTION_PREFIX}`), async ({ ack, body, action, context }) =>
      this.onPress(body, action, ack, commandAnswerOf(context)),
    );
    app.error(async (err) => {
      this.lastError = err.message;
      // The message and code only: a stack trace in the log says nothing an operator can act on.
      this.logger.error({ err: err.message, code: err.code }, 'slack: Bolt reported an error');
    });
    this.app = app;

    try {
      if (this.socket !== null) await this.socket.connect();
      else await app.start();
    } catch (err) {
      this.app = null; // a failed start can be retried
      const typed = toPlatformError(err, 'apps.connections.open');
      this.state = typed instanceof AuthError ? 'fatal' : 'disconnected';
      this.lastError = typed.message;
      throw typed;
    }
    this.state = 'connected';
    this.logger.info({ transport: this.transport, botUserId: identity.botUserId }, 'slack: ingress started');
  }

  async stop(): Promise<void> {
    const app = this.app;
    this.app = null;
    this.handler = null;
    if (this.socket !== null) await this.socket.stop();
    else if (app !== null) await app.stop();
    // Messages already read are still handed over.
    await this.preparing.idle();
    await this.handing.settled();
    this.state = 'disconnected';
  }

  health(): SlackIngressHealth {
    if (this.socket !== null) {
      const s = this.socket.snapshot;
      const fatal = this.state === 'fatal' || s.state === 'fatal';
      return {
        state: fatal ? 'fatal' : this.app === null ? 'disconnected' : s.state,
        lastEventAt: this.lastEventAt,
        error: s.error ?? this.lastError,
        transport: 'socket',
        reconnects: s.reconnects,
      };
    }
    return { state: this.state, lastEventAt: this.lastEventAt, error: this.lastError, transport: 'http', reconnects: 0 };
  }

  private async whoAmI(): Promise<SlackIdentity & { teamId?: string }> {
    try {
      const me = await slackAuthTest(this.client, this.logger, this.opts.clientOptions?.retryConfig);
      if (!me.user_id) throw new Error('auth.test returned no user_id: is SLACK_BOT_TOKEN a bot token?');
      return { botUserId: me.user_id, botId: me.bot_id, teamId: me.team_id };
    } catch (err) {
      const typed = toPlatformError(err, 'auth.test');
      this.state = typed instanceof AuthError ? 'fatal' : 'disconnected';
      this.lastError = typed.message;
      throw typed;
    }
  }

  /**
   * Slack redelivers an event it was not told had arrived (HTTP retry, Socket Mode redelivery): one turn per
   * event_id. A redelivery joins the first delivery's hand-overs, so it is acknowledged once they succeed; after a
   * failed one the event_id is forgotten, and the redelivery is handled afresh.
   */
  private readonly dedupeRetries: Middleware<AnyMiddlewareArgs> = async ({ body, context, next }) => {
    this.lastEventAt = Date.now();
    const eventId = (body as { event_id?: unknown }).event_id;
    const delivery = deliveryOf(context);
    if (typeof eventId === 'string') {
      const first = this.seenEvents.get(eventId);
      if (first !== undefined) {
        this.logger.debug({ eventId }, "slack: duplicate delivery; answered with the first one's hand-over");
        delivery?.add(first);
        return;
      }
      this.seenEvents.remember(eventId, delivery?.taken ?? Promise.resolve());
    }
    await next();
  };

  /**
   * A command that only answers is acknowledged first. One that queues a message is acknowledged once that message
   * was handed over within the ack budget; otherwise not (HTTP: 503 through `answer`), and the user is told what
   * became of it once its hand-over settles, since Slack never sends a slash command again.
   */
  private async onSlashCommand(payload: unknown, ack: () => Promise<void>, answer: CommandAnswer | undefined, sub?: string): Promise<void> {
    const message = slashCommandToMessage(payload, Date.now(), sub);
    const handler = this.handler;
    if (message === null || handler === null || !queuesMessage(message.text, this.opts.commands ?? [])) {
      await ack();
      return this.handOverInteraction(message, 'a slash command');
    }
    return this.gatedHandOver(message, `${message.chatId}|${message.userId}|${message.text}`, ack, answer, GATED_COMMAND);
  }

  /**
   * Acknowledged only once `message` was handed over within the ack budget (command-gate.ts). The same `key` while
   * one runs joins it; not acknowledged in time, its user is told once it settles whether to send it again.
   */
  private async gatedHandOver(
    message: InboundMessage,
    key: string,
    ack: () => Promise<void>,
    answer: CommandAnswer | undefined,
    kind: GatedKind,
  ): Promise<void> {
    const handler = this.handler;
    if (handler === null) return ack();
    if (answer) answer.gated = true;
    const { handOver, joined } = this.pendingGated.join(key, () => this.handing.track(handler(message)));
    const outcome = await outcomeWithin(handOver, this.ackBudgetMs);
    if (outcome === 'taken') return ack();
    answer?.refuse();
    this.logger.warn({ messageId: message.messageId, outcome, joined }, `slack: ${kind.what} not acknowledged (its message is not handed over yet)`);
    // A joined one's user is told by the first one's notice: it is the same message.
    if (joined) return;
    const tell = (text: string): Promise<void> => this.tellUser(message.chatId, message.userId, text);
    await handOver.then(
      () => tell(kind.takenLate),
      (err: unknown) => {
        this.lastError = err instanceof Error ? err.message : String(err);
        this.logger.error({ err, messageId: message.messageId }, `slack: handing a ${kind.what} to the gateway failed`);
        return tell(kind.notTaken);
      },
    );
  }

  /** A message only `user` sees in `channel`; best effort (the user saw Slack's error in any case). */
  private async tellUser(channel: string, user: string, text: string): Promise<void> {
    try {
      await this.client.chat.postEphemeral({ channel, user, text });
    } catch (err) {
      this.logger.warn({ err: toPlatformError(err, 'chat.postEphemeral').message, channel }, 'slack: could not tell the user about their slash command');
    }
  }

  private async onHomeOpened(event: unknown): Promise<void> {
    await this.handOverInteraction(homeOpenedToMessage(event), 'an App Home visit');
  }

  private async onPress(body: unknown, action: unknown, ack: () => Promise<void>, answer: CommandAnswer | undefined): Promise<void> {
    const message = pressToMessage(body, action);
    if (message === null) return ack();
    return this.gatedHandOver(message, `${message.chatId}|${message.userId}|press:${message.press?.data ?? ''}`, ack, answer, GATED_PRESS);
  }

  private async handOverInteraction(message: InboundMessage | null, what: string): Promise<void> {
    const handler = this.handler;
    if (handler === null || message === null) return;
    try {
      await handler(message);
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      this.logger.error({ err, messageId: message.messageId }, `slack: handing ${what} to the gateway failed`);
    }
  }

  /** `delivery`: the transport's ack gate for this event; each hand-over started or joined is added to it. */
  private async onEvent(event: unknown, delivery: EventDelivery | undefined): Promise<void> {
    const handler = this.handler;
    const me = this.identity;
    if (handler === null || me === null) return;
    const c = classifySlackEvent(event, me);
    if (c.action === 'ignore') {
      this.logger.debug({ reason: c.reason }, 'slack: event ignored');
      return;
    }
    if (c.action === 'refuse') {
      this.logger.warn({ reason: c.reason }, 'slack: malformed event skipped');
      return;
    }
    // `message` and `app_mention` for one mention arrive concurrently: claim the key before any await.
    const joined = (): boolean => {
      const first = this.seenMessages.get(c.dedupeKey);
      if (first !== undefined) delivery?.add(first);
      return first !== undefined;
    };
    if (joined()) return;
    let settle: ((handOver: Promise<void>) => void) | undefined;
    if (!c.needsThreadCheck) {
      const claim = new Promise<void>((resolve) => {
        settle = resolve;
      });
      delivery?.add(this.seenMessages.remember(c.dedupeKey, claim));
    }
    const conversationId = c.message.conversationId;
    const failed = (err: unknown): never => {
      this.lastError = err instanceof Error ? err.message : String(err);
      this.logger.error({ err, messageId: c.message.messageId }, 'slack: handing a message to the gateway failed');
      throw err;
    };
    // Thread-memory lookups run in arrival order per conversation, so a message that waits for one is not
    // overtaken by the next; the hand-over itself is ordered (and retried) by the gateway, and not waited for here.
    await this.preparing.run(conversationId, async () => {
      let handOver: Promise<void>;
      try {
        if (c.needsThreadCheck && !(await this.opts.threads.has(conversationId))) {
          this.logger.debug({ conversationId }, 'slack: channel message without a mention outside our threads');
          return settle?.(Promise.resolve());
        }
        // Taken meanwhile by the other event Slack sends for the same message.
        if (settle === undefined && joined()) return;
        if (c.remembersThread) await this.opts.threads.add(conversationId);
        handOver = handler(c.message).catch(failed);
      } catch (err) {
        handOver = Promise.reject(err).catch(failed);
      }
      if (settle) settle(handOver);
      else delivery?.add(this.seenMessages.remember(c.dedupeKey, handOver));
      void this.handing.track(handOver);
    });
  }
}
