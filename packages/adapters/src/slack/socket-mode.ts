/**
 * Socket Mode transport: Bolt's SocketModeReceiver, plus what the SDK leaves to us — its connection state
 * surfaced for health(), and a safety net under its reconnect.
 *
 * The SocketModeClient notices a dead connection (close frame, socket error, missing pongs) and reconnects on its
 * own. But when that reconnect fails for good (Slack API unreachable after the client's retries, token revoked
 * meanwhile) it drops the rejected promise; we catch it, mark the state, and keep trying unless the failure is
 * one no retry can fix.
 *
 * Events are acknowledged only once their messages were handed over (ack-gate.ts): the receiver's envelope handler
 * is given an ack that does nothing for `events_api` envelopes, and the real ack (`{envelope_id}` on the socket) is
 * sent when the gate says `taken`. An envelope left unacknowledged is redelivered by Slack.
 */
import { SocketModeReceiver, webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import type { AdapterState } from '../types.js';
import {
  SLACK_CLIENT_PING_TIMEOUT_MS,
  SLACK_RECONNECT_RETRY_MAX_MS,
  SLACK_RECONNECT_RETRY_MS,
  SLACK_SERVER_PING_TIMEOUT_MS,
  SLACK_STOP_TIMEOUT_MS,
  type SlackWebClientTuning,
} from './config.js';
import { toSlackLogger } from './slack-logger.js';
import { DELIVERY_KEY, gateEvent, isEventCallback } from './ack-gate.js';

/** apps.connections.open answers no retry fixes (the SDK's own list, plus a revoked or wrong-type token). */
const UNRECOVERABLE = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'user_removed_from_team',
  'team_disabled',
  'token_revoked',
  'not_allowed_token_type',
]);

type SocketModeClient = SocketModeReceiver['client'];
type OpenResponse = Awaited<ReturnType<SocketModeClient['start']>>;

export interface SocketTransportOptions {
  appToken: string;
  apiUrl: string;
  logger: Logger;
  clientOptions?: SlackWebClientTuning;
  clientPingTimeoutMs?: number;
  serverPingTimeoutMs?: number;
  reconnectRetryMs?: number;
  /** How long an event's ack may wait for its hand-over (ack-gate.ts). */
  ackBudgetMs: number;
}

/** What the SocketModeClient emits as `slack_event` (and Bolt's receiver listens to). */
interface EnvelopeArgs {
  ack: (response?: Record<string, unknown>) => Promise<void>;
  type: string;
  body: unknown;
  retry_num?: number;
  [key: string]: unknown;
}
type EnvelopeListener = (args: EnvelopeArgs) => Promise<void>;

export interface SocketStatus {
  state: AdapterState;
  error: string | null;
  /** Connections established after the first one. */
  reconnects: number;
}

export class SocketTransport {
  readonly receiver: SocketModeReceiver;
  private readonly client: SocketModeClient;
  private readonly logger: Logger;
  private readonly retryBaseMs: number;
  private status: SocketStatus = { state: 'disconnected', error: null, reconnects: 0 };
  private everConnected = false;
  private stopping = false;
  private readonly originalStart: () => Promise<OpenResponse>;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs: number;

  constructor(opts: SocketTransportOptions) {
    this.logger = opts.logger;
    this.retryBaseMs = opts.reconnectRetryMs ?? SLACK_RECONNECT_RETRY_MS;
    this.retryDelayMs = this.retryBaseMs;
    this.receiver = new SocketModeReceiver({
      appToken: opts.appToken,
      logger: toSlackLogger(opts.logger),
      clientPingTimeout: opts.clientPingTimeoutMs ?? SLACK_CLIENT_PING_TIMEOUT_MS,
      serverPingTimeout: opts.serverPingTimeoutMs ?? SLACK_SERVER_PING_TIMEOUT_MS,
      // A fresh object: the SocketModeClient writes its own retryConfig default into it.
      installerOptions: { clientOptions: { slackApiUrl: opts.apiUrl, ...opts.clientOptions } },
      // The gate's delivery (gateEnvelopes) travels with the envelope into Bolt's context.
      customPropertiesExtractor: (args) => (DELIVERY_KEY in args ? { [DELIVERY_KEY]: args[DELIVERY_KEY] } : {}),
    });
    this.client = this.receiver.client;
    this.gateEnvelopes(opts.ackBudgetMs);
    this.originalStart = this.client.start.bind(this.client);
    this.watch();
    this.guardReconnect();
  }

  get snapshot(): SocketStatus {
    return { ...this.status };
  }

  /**
   * Opens the first connection. Same as Bolt's App.start() (→ receiver.start() → client.start()), but through the
   * unguarded start, so a bad token or an unreachable Slack at boot rejects with a clear error.
   */
  async connect(): Promise<void> {
    this.stopping = false;
    try {
      await this.originalStart();
    } catch (err) {
      this.fail(err, isUnrecoverable(err) ? 'fatal' : 'disconnected');
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SLACK_STOP_TIMEOUT_MS);
    });
    await Promise.race([this.client.disconnect(), timeout]);
    clearTimeout(timer);
    this.status.state = 'disconnected';
  }

  private watch(): void {
    const c = this.client;
    c.on('connecting', () => this.setState('connecting'));
    c.on('reconnecting', () => this.setState('connecting'));
    c.on('connected', () => {
      if (this.everConnected) {
        this.status.reconnects += 1;
        this.logger.info({ reconnects: this.status.reconnects }, 'slack: Socket Mode reconnected');
      }
      this.everConnected = true;
      this.retryDelayMs = this.retryBaseMs;
      this.setState('connected');
    });
    // 'close' fires for every lost WebSocket; the client reconnects by itself unless we are stopping.
    c.on('close', () => {
      if (this.stopping || this.status.state === 'fatal') return;
      this.status.error = 'Socket Mode connection lost';
      this.logger.warn('slack: Socket Mode connection lost, reconnecting');
      this.setState('connecting');
    });
    c.on('disconnected', () => {
      if (this.status.state !== 'fatal') this.setState('disconnected');
    });
    c.on('error', (err: unknown) => {
      this.status.error = err instanceof Error ? err.message : String(err);
    });
  }

  /**
   * Puts ack-gate.ts between the client and Bolt's receiver: an `events_api` envelope reaches Bolt with an ack that
   * does nothing (Bolt acks events before any listener runs) and is acknowledged here once its hand-over is taken.
   */
  private gateEnvelopes(budgetMs: number): void {
    const bolt = this.client.listeners('slack_event') as EnvelopeListener[];
    this.client.removeAllListeners('slack_event');
    this.client.on('slack_event', async (args: EnvelopeArgs) => {
      if (!isEventCallback(args.body)) {
        for (const listener of bolt) await listener(args);
        return;
      }
      const outcome = await gateEvent(async (delivery) => {
        for (const listener of bolt) await listener({ ...args, ack: async () => {}, [DELIVERY_KEY]: delivery });
      }, budgetMs);
      if (outcome === 'taken' || outcome === 'unreadable') return args.ack();
      const eventId = (args.body as { event_id?: unknown }).event_id;
      this.logger.warn(
        { eventId, retryNum: args.retry_num, outcome },
        'slack: event not acknowledged (its message is not handed over yet); Slack will redeliver',
      );
    });
  }

  /** The SDK's reconnect calls `this.start()` and ignores its promise; make that call one that cannot reject. */
  private guardReconnect(): void {
    const guarded = async (): Promise<OpenResponse> => {
      try {
        return await this.originalStart();
      } catch (err) {
        this.onReconnectFailed(err);
        return { ok: false };
      }
    };
    Object.assign(this.client, { start: guarded });
  }

  private onReconnectFailed(err: unknown): void {
    if (this.stopping) return;
    if (isUnrecoverable(err)) {
      this.fail(err, 'fatal');
      this.logger.error({ err }, 'slack: Socket Mode cannot reconnect; giving up');
      return;
    }
    this.fail(err, 'disconnected');
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, SLACK_RECONNECT_RETRY_MAX_MS);
    this.logger.warn({ err, retryInMs: delay }, 'slack: Socket Mode reconnect failed; trying again');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.stopping) void this.client.start();
    }, delay);
  }

  private fail(err: unknown, state: AdapterState): void {
    this.status.error = err instanceof Error ? err.message : String(err);
    this.setState(state);
  }

  private setState(state: AdapterState): void {
    this.status.state = state;
  }
}

function isUnrecoverable(err: unknown): boolean {
  return err instanceof webApi.WebAPIPlatformError && UNRECOVERABLE.has(err.data.error);
}
