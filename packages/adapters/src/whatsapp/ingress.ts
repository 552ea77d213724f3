/**
 * One WhatsApp business number's ingress: it attaches to the shared webhook (webhook.ts) by its phone_number_id,
 * turns each message into an InboundMessage and hands it over; the webhook answers Meta only after that.
 * Statuses (sent / delivered / read / failed of our own messages) are logged, never handed over. A message id
 * seen before (Meta redelivers a batch it had no 200 for) joins its first hand-over instead of starting another, so
 * the redelivery is answered with that hand-over's outcome; the gateway's mailbox drops repeats across processes.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { NetworkError, PlatformError, RateLimitedError } from '../errors.js';
import { HandOverMemory } from '../shared/hand-overs.js';
import type { AdapterHealth, InboundHandler, InboundMessage, PlatformIngress } from '../types.js';
import { WHATSAPP_DEDUPE_CAPACITY, type ServiceWindowMemory, type WhatsAppIngressOptions } from './config.js';
import { contactNames, logLabel, normalizeMessage, type ChangeContext } from './normalize.js';
import type { WhatsAppWebhook } from './webhook.js';
import { isRecord, type Json } from '../shared/wire-values.js';

export class WhatsAppIngress implements PlatformIngress {
  readonly platform = 'whatsapp' as const;
  private handler: InboundHandler | null = null;
  private lastEventAt: number | null = null;
  /** Per message id, its hand-over, running or done (a failed one is forgotten). */
  private readonly seen: HandOverMemory<string>;
  private readonly logger: Logger;
  private readonly window: ServiceWindowMemory;
  private readonly phoneNumberId: string;

  constructor(
    private readonly webhook: WhatsAppWebhook,
    opts: WhatsAppIngressOptions,
  ) {
    this.logger = opts.logger;
    this.window = opts.window;
    this.phoneNumberId = opts.phoneNumberId;
    this.seen = new HandOverMemory<string>(opts.dedupeCapacity ?? WHATSAPP_DEDUPE_CAPACITY);
  }

  registerRoutes(app: FastifyInstance): void {
    this.webhook.registerRoutes(app);
  }

  async start(handler: InboundHandler): Promise<void> {
    this.handler = handler;
    this.webhook.attach(this.phoneNumberId, (value) => this.receive(value));
    this.logger.info({ path: this.webhook.path }, 'whatsapp number ready for webhooks');
  }

  async stop(): Promise<void> {
    this.webhook.detach(this.phoneNumberId);
    this.handler = null;
  }

  health(): AdapterHealth {
    // A webhook has no connection to watch: attached is as connected as it gets.
    return { state: this.handler ? 'connected' : 'disconnected', lastEventAt: this.lastEventAt, error: null };
  }

  private async receive(value: Json): Promise<void> {
    this.lastEventAt = Date.now();
    if (Array.isArray(value.statuses)) this.logStatuses(value.statuses);
    if (!Array.isArray(value.messages)) return;
    const meta = isRecord(value.metadata) ? value.metadata : {};
    const ctx: ChangeContext = {
      displayPhone: (typeof meta.display_phone_number === 'string' ? meta.display_phone_number : '').replace(/\D/g, ''),
      names: contactNames(value.contacts),
    };
    for (const m of value.messages) await this.takeOne(m, ctx);
  }

  private async takeOne(m: unknown, ctx: ChangeContext): Promise<void> {
    const handler = this.handler;
    if (handler === null) throw new Error('whatsapp ingress is stopped');
    const msg = normalizeMessage(m, ctx);
    if (msg === null) {
      const type = isRecord(m) && 'type' in m ? logLabel(m.type) : 'unknown';
      return void this.logger.info({ type }, 'whatsapp message of a kind Herald does not answer; skipped');
    }
    // A redelivery (Meta had no 2xx for the batch) gets the outcome of the first delivery's hand-over, running or
    // done; after a failed one it is handed over again.
    const first = this.seen.get(msg.messageId);
    if (first !== undefined) {
      this.logger.debug({ messageId: msg.messageId }, 'whatsapp redelivery; joining its hand-over');
      return first;
    }
    return this.seen.remember(msg.messageId, this.handOver(handler, msg));
  }

  private async handOver(handler: InboundHandler, msg: InboundMessage): Promise<void> {
    try {
      // The window opens before the hand-over, so the reply that follows finds it open.
      await this.window.touch(this.phoneNumberId, msg.userId, { at: msg.sentAt, messageId: msg.platformMessageId });
      await handler(msg);
    } catch (err) {
      // WhatsApp refused what the gateway answered on the spot (a pairing code outside the window, a number that
      // cannot be reached): a redelivery would be refused the same way, so the message counts as dealt with.
      if (err instanceof PlatformError && !(err instanceof NetworkError || err instanceof RateLimitedError)) {
        return void this.logger.warn({ err: err.message, messageId: msg.messageId }, 'whatsapp refused the answer to a message; not asking Meta for it again');
      }
      // Not taken: forgotten (HandOverMemory), so Meta's redelivery gets through.
      throw err;
    }
  }

  private logStatuses(statuses: unknown[]): void {
    for (const s of statuses) {
      if (!isRecord(s) || s.status !== 'failed') continue;
      const first = Array.isArray(s.errors) && isRecord(s.errors[0]) ? s.errors[0] : {};
      this.logger.warn({ messageId: logLabel(s.id, 128), code: first.code, title: first.title }, 'whatsapp reported a message of ours as failed');
    }
  }
}
