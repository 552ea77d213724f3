/**
 * The Telegram connection: long polling by default, a webhook on the gateway's fastify when a URL is set.
 * Updates are read and routed by Herald's own dispatcher (normalize.ts readUpdate, routeUpdate) to `normalizeMessage`, are tagged when they
 * are parts of one message (an album, a split long text: parts.ts), and are handed to the gateway at once, in
 * arrival order; the gateway's hand-over keeps each conversation in that order and owns the retries, while the
 * update stays unconfirmed. Nothing waits here for a later part: the gateway's worker does.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import pRetry from 'p-retry';
import { AuthError, BadRequestError, type PlatformError } from '../errors.js';
import type { AdapterHealth, InboundHandler, InboundMessage, PlatformIngress } from '../types.js';
import { toPlatformError } from './api-errors.js';
import { TelegramApi, realSleep } from './api.js';
import {
  TELEGRAM_ALLOWED_UPDATES,
  TELEGRAM_DEDUPE_SIZE,
  TELEGRAM_WEBHOOK_ANSWER_MS,
  TELEGRAM_DEFAULT_WAITS,
  TELEGRAM_POLL_TIMEOUT_SEC,
  TELEGRAM_SPLIT_MIN_PART,
  type ReconnectWaits,
  type Sleep,
  type TelegramIngressOptions,
} from './config.js';
import { IncomingParts } from './parts.js';
import { KeyedSerial } from '../shared/keyed-serial.js';
import { isRead, normalizeMessage, readUpdate, routeUpdate, type BotIdentity, type ReadUpdate, type UpdateHandlers } from './normalize.js';
import { HealthTracker, Poller } from './poller.js';
import { RecentIds } from '../shared/recent-ids.js';
import { webhookErrorHandler } from '../shared/route-errors.js';
import { within } from '../shared/hand-overs.js';
import type { TgMessage } from './wire.js';

const PLATFORM = 'telegram';
const SECRET_HEADER = 'x-telegram-bot-api-secret-token';
/** What Telegram accepts as a webhook secret_token. */
const WEBHOOK_SECRET_RE = /^[A-Za-z0-9_-]{1,256}$/;

type DispatchResult = 'taken' | 'failed' | 'duplicate' | 'invalid' | 'dropped';

export class TelegramIngress implements PlatformIngress {
  readonly platform = PLATFORM;
  private readonly logger: Logger;
  private readonly api: TelegramApi;
  /** Where each type of update goes. */
  private readonly handlers: UpdateHandlers = {
    message: (message) => this.takeMessage(message),
    // A button press goes straight to the gateway, which answers the callback query (with a note, or none).
    callback_query: (press) => this.handOver(press),
  };
  private readonly tracker = new HealthTracker();
  private readonly recent: RecentIds<number>;
  private readonly parts: IncomingParts;
  private readonly tagging = new KeyedSerial();
  private readonly waits: ReconnectWaits;
  private readonly sleep: Sleep;
  private readonly requireMention: boolean;
  private readonly webhookSecret: string | null;
  private readonly webhookPath: string | null;
  private handler: InboundHandler | null = null;
  /** Updates being handed over, by update_id. */
  private readonly handing = new Map<number, Promise<DispatchResult>>();
  private identity: BotIdentity | null = null;
  private commandsPublished = false;
  /** Webhook set (webhook mode) or any leftover webhook removed (polling mode). */
  private transportReady = false;
  private poller: Poller | null = null;
  private lifetime = new AbortController();
  private background: Promise<void> | null = null;

  constructor(private readonly opts: TelegramIngressOptions) {
    this.logger = opts.logger; // the gateway passes a child already bound to { platform }
    this.sleep = opts.sleep ?? realSleep;
    this.waits = { ...TELEGRAM_DEFAULT_WAITS, ...opts.waits };
    this.requireMention = opts.requireMention ?? true;
    this.api = new TelegramApi({ token: opts.token, apiRoot: opts.apiRoot, logger: this.logger, sleep: this.sleep, callTimeoutMs: opts.callTimeoutMs });
    this.recent = new RecentIds(opts.dedupeSize ?? TELEGRAM_DEDUPE_SIZE);
    this.parts = new IncomingParts(opts.splitMinPartLength ?? TELEGRAM_SPLIT_MIN_PART, opts.partsMemory);
    if (opts.webhook) {
      const given = opts.webhook.secret;
      if (given && !WEBHOOK_SECRET_RE.test(given)) {
        throw new Error('TELEGRAM_WEBHOOK_SECRET must be 1-256 characters from A-Z, a-z, 0-9, "_" and "-"');
      }
      this.webhookSecret = given || randomBytes(24).toString('hex');
      this.webhookPath = opts.webhook.path ?? (new URL(opts.webhook.url).pathname || '/');
    } else {
      this.webhookSecret = null;
      this.webhookPath = null;
    }
  }

  health(): AdapterHealth {
    return this.tracker.snapshot();
  }

  /**
   * Mounts the webhook route (webhook mode only). Telegram's secret header is checked first: a wrong or missing
   * one is a 401 and the update goes nowhere.
   */
  registerRoutes(app: FastifyInstance): void {
    const path = this.webhookPath;
    const secret = this.webhookSecret;
    if (path === null || secret === null) return;
    // No body schema: fastify's validator coerces types (an update_id of null becomes 0, "12" becomes 12), and a
    // coerced update would be taken as if Telegram had sent it. dispatch() checks the body as sent.
    app.post(
      path,
      {
        errorHandler: webhookErrorHandler(this.logger, 'telegram webhook'),
        // Checked before the body is even read, so a forger learns nothing and costs little.
        onRequest: async (req, reply) => {
          const given = req.headers[SECRET_HEADER];
          if (typeof given !== 'string' || !sameSecret(given, secret)) {
            this.logger.warn({ ip: req.ip }, 'telegram webhook call with a wrong or missing secret token');
            return reply.code(401).send({ ok: false, error: 'wrong secret token' });
          }
        },
      },
      async (req, reply) => {
        // Not ready yet: a non-2xx makes Telegram deliver it again later.
        if (this.handler === null || this.identity === null) return reply.code(503).send({ ok: false });
        const result = await within(this.dispatch(req.body), this.opts.webhook?.answerWithinMs ?? TELEGRAM_WEBHOOK_ANSWER_MS, 'pending' as const);
        if (result === 'invalid') return reply.code(400).send({ ok: false, error: 'not a Telegram update' });
        // Still being handed over (Redis away, a replica WAIT timing out): not confirmed, so Telegram sends it again,
        // and the resend is answered with this hand-over's outcome (dispatch).
        if (result === 'pending') return reply.code(503).send({ ok: false });
        return reply.code(result === 'failed' ? 500 : 200).send({ ok: result !== 'failed' });
      },
    );
  }

  async start(handler: InboundHandler): Promise<void> {
    this.handler = handler;
    this.lifetime = new AbortController();
    this.tracker.set('connecting');
    try {
      await this.prepare(this.lifetime.signal);
    } catch (err) {
      const mapped = toPlatformError(err, 'start-up');
      if (isPermanent(mapped)) {
        this.fatal(mapped);
        throw mapped;
      }
      this.tracker.set('disconnected', mapped.message);
      this.logger.warn({ err: mapped.message }, 'telegram start-up call failed; retrying in the background');
    }
    if (this.opts.webhook) {
      if (!this.transportReady) this.background = this.retryWebhookSetup(this.lifetime.signal);
      return;
    }
    this.poller = new Poller({
      api: this.api,
      timeoutSec: this.opts.pollTimeoutSec ?? TELEGRAM_POLL_TIMEOUT_SEC,
      waits: this.waits,
      sleep: this.sleep,
      logger: this.logger,
      health: this.tracker,
      prepare: (signal) => this.prepare(signal),
      dispatch: (u) => this.dispatch(u),
      onFatal: (err) => this.fatal(err),
    });
    this.poller.start();
  }

  async stop(): Promise<void> {
    this.lifetime.abort();
    await this.poller?.halt();
    await this.background;
    await this.poller?.drain();
    this.poller = null;
    this.handler = null;
    if (this.tracker.current !== 'fatal') this.tracker.set('disconnected');
  }

  /** Start-up calls, each done once: who am I (for mentions), the command menu, and the webhook or its removal. */
  private async prepare(signal: AbortSignal): Promise<void> {
    if (this.identity === null) {
      const me = await this.api.call('getMe', {}, signal);
      this.identity = { id: me.id, username: me.username };
      this.tracker.set('connected');
      this.logger.info({ username: me.username, mode: this.opts.webhook ? 'webhook' : 'polling' }, 'telegram bot connected');
    }
    if (!this.commandsPublished) await this.publishCommands(signal);
    if (this.opts.webhook) {
      if (!this.transportReady) await this.setWebhook(this.opts.webhook.url, signal);
    } else if (!this.transportReady) {
      // Polling and a webhook exclude each other; switching from webhook mode leaves one behind.
      const info = await this.api.call('getWebhookInfo', {}, signal);
      if (info.url) {
        this.logger.warn({ url: info.url }, 'telegram webhook is set; removing it to use long polling');
        await this.api.call('deleteWebhook', { drop_pending_updates: false }, signal);
      }
      this.transportReady = true;
    }
  }

  private async publishCommands(signal: AbortSignal): Promise<void> {
    const commands = this.opts.commands ?? [];
    if (commands.length > 0) {
      try {
        await this.api.call('setMyCommands', { commands: commands.map((c) => ({ command: c.name, description: c.description })) }, signal);
      } catch (err) {
        const mapped = toPlatformError(err, 'setMyCommands');
        // A bad menu must not keep the bot offline; a network failure is retried with everything else.
        if (mapped.name === 'NetworkError') throw err;
        this.logger.error({ err: mapped.message }, 'telegram command menu rejected');
      }
    }
    this.commandsPublished = true;
  }

  private async setWebhook(url: string, signal: AbortSignal): Promise<void> {
    // The constructor picks a secret whenever there is a webhook.
    if (this.webhookSecret === null) throw new Error('telegram webhook without a secret');
    await this.api.call('setWebhook', { url, secret_token: this.webhookSecret, allowed_updates: [...TELEGRAM_ALLOWED_UPDATES] }, signal);
    this.transportReady = true;
    this.tracker.set('connected');
    this.logger.info({ url }, 'telegram webhook set');
  }

  /** Webhook mode's start-up calls, retried in the background until they succeed or fail for good. */
  private async retryWebhookSetup(signal: AbortSignal): Promise<void> {
    const permanent = (err: unknown): PlatformError | null => {
      const mapped = toPlatformError(err, 'webhook set-up');
      return isPermanent(mapped) ? mapped : null;
    };
    // The first try was start()'s own.
    await this.sleep(this.waits.networkInitialMs, signal);
    try {
      await pRetry(() => this.prepare(signal), {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: this.waits.networkInitialMs,
        maxTimeout: this.waits.networkMaxMs,
        signal,
        onFailedAttempt: ({ error }) => {
          if (permanent(error)) return;
          const mapped = toPlatformError(error, 'webhook set-up');
          this.tracker.set('disconnected', mapped.message);
          this.logger.warn({ err: mapped.message }, 'telegram webhook set-up failed; retrying');
        },
        shouldRetry: ({ error }) => permanent(error) === null,
      });
    } catch (err) {
      // Stopped, or a failure retrying cannot fix (p-retry also stops on a programming error): an operator's turn.
      if (!signal.aborted) this.fatal(permanent(err) ?? toPlatformError(err, 'webhook set-up'));
    }
  }

  private fatal(err: PlatformError): void {
    this.tracker.set('fatal', err.message);
    this.logger.error({ err: err.message }, 'telegram ingress stopped: this needs an operator');
  }

  /**
   * One update from either transport. Never rejects. A webhook resend of an update whose hand-over is still
   * running (the gateway retrying it) gets that hand-over's outcome, not an early 200 that would let it be lost.
   */
  private dispatch(raw: unknown): Promise<DispatchResult> {
    const update = this.read(raw);
    if (!isRead(update)) {
      if (update.refused === 'dropped' && update.malformed) this.logger.warn({ updateId: update.id }, 'telegram callback query malformed; dropped');
      else if (update.refused === 'dropped') this.logger.debug({ updateId: update.id }, 'telegram callback query unreadable; dropped');
      else this.logger.warn({ updateId: update.id }, 'telegram update malformed; refused');
      return Promise.resolve(update.refused);
    }
    const id = update.id;
    const running = this.handing.get(id);
    if (running) {
      this.logger.debug({ updateId: id }, 'telegram update sent again while being handed over; answering with that hand-over');
      return running;
    }
    if (!this.recent.add(id)) return Promise.resolve('duplicate');
    const result = this.handUpdateOver(update);
    this.handing.set(id, result);
    void result.then(() => this.handing.delete(id));
    return result;
  }

  /**
   * readUpdate with the promise kept that dispatch never rejects: wire.ts lets in only what normalisation can read,
   * so a throw here is a bug, logged by its message (never a stack) and answered as a refused update.
   */
  private read(raw: unknown): ReturnType<typeof readUpdate> {
    try {
      return readUpdate(raw);
    } catch (err) {
      this.logger.error({ err: String(err) }, 'telegram update could not be read; refused');
      return { refused: 'invalid' };
    }
  }

  /** A failed hand-over is 'failed', so the webhook answers 500 and Telegram sends the update again. */
  private async handUpdateOver(update: ReadUpdate): Promise<DispatchResult> {
    this.tracker.event();
    try {
      await routeUpdate(update, this.handlers);
      return 'taken';
    } catch (err) {
      this.recent.delete(update.id);
      this.logger.error({ err: String(err), updateId: update.id }, 'telegram update was not handed over');
      return 'failed';
    }
  }

  /**
   * Tagging a message may ask Redis (the gateway's PartsMemory): one chat's messages are tagged one at a time, each
   * handed over as soon as it is tagged, so they still reach the gateway in arrival order.
   */
  private takeMessage(raw: TgMessage): Promise<void> {
    return this.tagging
      .run(String(raw.chat.id), async () => {
        const msg = await this.tagMessage(raw);
        return msg === null ? null : { handed: this.handOver(msg) };
      })
      .then((h) => h?.handed);
  }

  /** The message as handed over (tagged when a part of one), or null when the bot does not take it. */
  private async tagMessage(raw: TgMessage): Promise<InboundMessage | null> {
    if (this.identity === null) return null;
    let result = normalizeMessage(raw, { bot: this.identity, requireMention: this.requireMention });
    // In a group only one part of an album (its caption) or of a split text (the first) mentions the bot; the rest
    // belong with it.
    if (!result.accepted && result.reason === 'not-addressed') {
      const again = normalizeMessage(raw, { bot: this.identity, requireMention: false });
      if (again.accepted && (await this.parts.follows(again.message, raw, again.joinable))) result = again;
    }
    if (!result.accepted) {
      this.logger.debug({ reason: result.reason, chatId: raw.chat.id }, 'telegram message ignored');
      return null;
    }
    // Each part is handed over at once, tagged: the worker answers the parts as one turn. Holding a part here instead
    // would hold the webhook's answer, and Telegram sends a chat's next update only after that answer: the next
    // part could never join.
    return this.parts.take(result.message, raw, result.joinable);
  }

  private handOver(msg: InboundMessage): Promise<void> {
    const handler = this.handler;
    if (handler === null) return Promise.reject(new Error('telegram ingress is not started'));
    return handler(msg);
  }
}

/** Retrying will not fix a revoked token or a webhook URL Telegram refuses. */
function isPermanent(err: PlatformError): boolean {
  return err instanceof AuthError || err instanceof BadRequestError;
}

/** Constant-time, and compares digests of equal length, so the time taken does not tell the secret's length either. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
