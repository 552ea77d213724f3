/**
 * The Cloud API webhook on the gateway's fastify. One Meta app posts every number's events to one Callback URL,
 * so the route is shared: each number's ingress attaches to it by its phone_number_id.
 *
 * - GET: the verification handshake (`hub.mode=subscribe`, `hub.verify_token`, `hub.challenge` echoed back).
 * - POST: `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the app secret) is checked before the body is
 *   parsed: a wrong or missing one is a 401 and nothing is read. Then each change goes to its number's ingress,
 *   and the answer is 200 only once every message was handed over; a failed hand-over is a 500, and one still
 *   running after WHATSAPP_WEBHOOK_ANSWER_MS a 503. Meta sends the whole batch again later; the ingresses drop what
 *   they already took and join what they are still handing over.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { webhookErrorHandler } from '../shared/route-errors.js';
import { within } from '../shared/hand-overs.js';
import { WHATSAPP_WEBHOOK_ANSWER_MS, WHATSAPP_WEBHOOK_BODY_LIMIT, WHATSAPP_WEBHOOK_PATH, type WhatsAppWebhookOptions } from './config.js';
import { isRecord, type Json } from '../shared/wire-values.js';

/** What an attached ingress takes: one change's `value` (metadata, contacts, messages, statuses). */
export type ChangeReceiver = (value: Json) => Promise<void>;

export class WhatsAppWebhook {
  private readonly receivers = new Map<string, ChangeReceiver>();
  private readonly mounted = new WeakSet<FastifyInstance>();
  readonly path: string;

  constructor(private readonly opts: WhatsAppWebhookOptions) {
    this.path = opts.path ?? WHATSAPP_WEBHOOK_PATH;
  }

  attach(phoneNumberId: string, receive: ChangeReceiver): void {
    this.receivers.set(phoneNumberId, receive);
  }

  detach(phoneNumberId: string): void {
    this.receivers.delete(phoneNumberId);
  }

  /** Mounts GET and POST once per server, in a scope of their own (the raw-body parser stays inside). */
  registerRoutes(app: FastifyInstance): void {
    if (this.mounted.has(app)) return;
    this.mounted.add(app);
    void app.register(async (scope) => {
      scope.setErrorHandler(webhookErrorHandler(this.opts.logger, 'whatsapp webhook'));
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WHATSAPP_WEBHOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));
      scope.get(this.path, (req, reply) => this.verify(req, reply));
      scope.post(this.path, (req, reply) => this.receive(req, reply));
    });
  }

  private async verify(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const q = isRecord(req.query) ? req.query : {};
    const challenge = typeof q['hub.challenge'] === 'string' ? q['hub.challenge'] : '';
    if (q['hub.mode'] !== 'subscribe' || typeof q['hub.verify_token'] !== 'string' || !same(q['hub.verify_token'], this.opts.verifyToken) || challenge === '') {
      this.opts.logger.warn({ ip: req.ip }, 'whatsapp webhook verification refused: wrong verify token or mode');
      return void reply.code(403).send({ ok: false, error: 'verification failed' });
    }
    this.opts.logger.info('whatsapp webhook verified');
    return void reply.code(200).type('text/plain').send(challenge);
  }

  private async receive(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const given = req.headers['x-hub-signature-256'];
    if (typeof given !== 'string' || !same(given, `sha256=${createHmac('sha256', this.opts.appSecret).update(raw).digest('hex')}`)) {
      this.opts.logger.warn({ ip: req.ip }, 'whatsapp webhook call with a wrong or missing X-Hub-Signature-256');
      return void reply.code(401).send({ ok: false, error: 'invalid signature' });
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return void reply.code(400).send({ ok: false, error: 'invalid JSON' });
    }
    if (!isRecord(body) || !Array.isArray(body.entry)) return void reply.code(400).send({ ok: false, error: 'not a webhook payload' });
    if (body.object !== 'whatsapp_business_account') return void reply.code(200).send({ ok: true });
    const values = changeValues(body.entry);
    if (values.length > 0 && this.receivers.size === 0) return void reply.code(503).send({ ok: false, error: 'not ready' });
    const results = await within(
      Promise.allSettled(values.map((v) => this.dispatch(v))),
      this.opts.answerWithinMs ?? WHATSAPP_WEBHOOK_ANSWER_MS,
      'pending' as const,
    );
    // Still being handed over: not confirmed, so Meta delivers the batch again, and the redelivery's messages join
    // the hand-overs still running (ingress.ts).
    if (results === 'pending') {
      this.opts.logger.warn('whatsapp webhook: a hand-over is still running; Meta will deliver the batch again');
      return void reply.code(503).send({ ok: false, error: 'not taken yet' });
    }
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length > 0) {
      this.opts.logger.warn({ failed: failed.length }, 'whatsapp webhook: a hand-over failed; Meta will deliver the batch again');
      return void reply.code(500).send({ ok: false, error: 'not taken' });
    }
    return void reply.code(200).send({ ok: true });
  }

  private async dispatch(value: Json): Promise<void> {
    const meta = isRecord(value.metadata) ? value.metadata : {};
    const id = typeof meta.phone_number_id === 'string' ? meta.phone_number_id : '';
    const receiver = this.receivers.get(id);
    // A number this gateway does not serve (another app's, or one not configured): acknowledged, never retried.
    if (!receiver) return void this.opts.logger.warn({ phoneNumberId: id.slice(0, 32) }, 'whatsapp webhook for a phone number this gateway does not serve');
    await receiver(value);
  }
}

/** Every `messages` change's value, in order. */
function changeValues(entries: unknown[]): Json[] {
  const out: Json[] = [];
  for (const e of entries) {
    if (!isRecord(e) || !Array.isArray(e.changes)) continue;
    for (const c of e.changes) if (isRecord(c) && c.field === 'messages' && isRecord(c.value)) out.push(c.value);
  }
  return out;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
