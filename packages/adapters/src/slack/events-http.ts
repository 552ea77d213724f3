/**
 * Events API over HTTP on the gateway's fastify: a minimal Bolt `Receiver`.
 *
 * The route keeps the raw body (the signature covers the exact bytes), verifies it with Bolt's own
 * `isValidSlackRequest` (bad signature or a timestamp older than 5 minutes → 401, nothing handed over), answers
 * `url_verification` itself, and feeds everything else to `app.processEvent`. The HTTP answer goes out as soon as
 * Bolt acknowledges (Bolt acks Events API payloads before running listeners), so Slack's 3-second budget never
 * depends on how long the gateway takes.
 */
import { parse as parseQuery } from 'node:querystring';
import { isValidSlackRequest, type App, type Receiver } from '@slack/bolt';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { SLACK_EVENTS_PATH } from './config.js';
import { webhookErrorHandler } from '../shared/route-errors.js';

/** Bolt never acking (an unknown payload type) must not hold Slack's request open until its 3 s timeout. */
const ACK_DEADLINE_MS = 2_500;
const BODY_LIMIT_BYTES = 4 * 1024 * 1024;

type AckBody = Record<string, unknown> | string | undefined;

export class FastifyEventsReceiver implements Receiver {
  private app: App | null = null;
  private running = false;

  constructor(
    private readonly signingSecret: string,
    private readonly logger: Logger,
    /** The route: each Slack app has its own Request URL, checked against its own secret. */
    private readonly path: string = SLACK_EVENTS_PATH,
  ) {}

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
  }

  /** Adds `POST /slack/events` (or the app's own path) in its own fastify scope, so the raw-body parser does not leak into other routes. */
  registerRoutes(fastify: FastifyInstance): void {
    void fastify.register(async (scope) => {
      scope.setErrorHandler(webhookErrorHandler(this.logger, 'slack events'));
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, (_req, body, done) => done(null, body));
      scope.post(this.path, (req, reply) => this.handle(req, reply));
    });
  }

  private async handle(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const raw = typeof req.body === 'string' ? req.body : '';
    const contentType = String(req.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const form = contentType === 'application/x-www-form-urlencoded' ? parseQuery(raw) : null;

    // Slack's SSL check is sent unsigned and carries nothing to act on.
    if (form?.ssl_check === '1') return void reply.code(200).send();

    const signature = header(req, 'x-slack-signature');
    const timestamp = Number(header(req, 'x-slack-request-timestamp'));
    if (
      signature === undefined ||
      !Number.isFinite(timestamp) ||
      !isValidSlackRequest({
        signingSecret: this.signingSecret,
        body: raw,
        headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
      })
    ) {
      this.logger.warn({ ip: req.ip, path: this.path }, 'slack: rejected an Events request with a bad signature or stale timestamp');
      return void reply.code(401).send({ ok: false, error: 'invalid_signature' });
    }

    let body: unknown;
    try {
      body = form !== null ? (typeof form.payload === 'string' ? JSON.parse(form.payload) : { ...form }) : JSON.parse(raw);
    } catch {
      return void reply.code(400).send({ ok: false, error: 'invalid_json' });
    }
    if (!isRecord(body)) return void reply.code(400).send({ ok: false, error: 'invalid_payload' });
    const payload = body;

    if (payload.type === 'url_verification') {
      if (typeof payload.challenge !== 'string') return void reply.code(400).send({ ok: false, error: 'invalid_challenge' });
      return void reply.code(200).send({ challenge: payload.challenge });
    }
    // Bolt takes any body with an `event` for an Events API envelope and reads the event as an object.
    if (payload.event !== undefined && !isRecord(payload.event)) return void reply.code(400).send({ ok: false, error: 'invalid_event' });

    const app = this.app;
    if (!this.running || app === null) {
      // Not started yet (or stopping): a non-2xx makes Slack retry later instead of losing the event.
      return void reply.code(503).send({ ok: false, error: 'not_ready' });
    }

    const retryNum = header(req, 'x-slack-retry-num');
    const retryReason = header(req, 'x-slack-retry-reason');
    const answer = await this.dispatch(app, payload, retryNum === undefined ? undefined : Number(retryNum), retryReason);
    if (answer.kind === 'unreadable') return void reply.code(400).send({ ok: false, error: 'unreadable_payload' });
    if (answer.body === undefined || answer.body === '') return void reply.code(200).send();
    return void reply.code(200).send(answer.body);
  }

  /**
   * Resolves when Bolt acks (or finishes without acking, or fails before acking); processing goes on after.
   * Bolt acks an Events API payload before any listener runs, and Herald's slash command listener acks first
   * thing, so a failure before the ack is Bolt failing to read the payload's shape (`event.user` null, `view` a
   * string, …): `unreadable`, which Slack's retry would not change.
   */
  private dispatch(
    app: App,
    body: Record<string, unknown>,
    retryNum: number | undefined,
    retryReason: string | undefined,
  ): Promise<{ kind: 'ack'; body: AckBody } | { kind: 'unreadable' }> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (v: { kind: 'ack'; body: AckBody } | { kind: 'unreadable' }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(v);
      };
      const deadline = setTimeout(() => settle({ kind: 'ack', body: undefined }), ACK_DEADLINE_MS);
      app
        .processEvent({
          body,
          retryNum,
          retryReason,
          ack: async (response?: AckBody) => settle({ kind: 'ack', body: response }),
        })
        .then(
          () => settle({ kind: 'ack', body: undefined }),
          (err: unknown) => {
            if (settled) return void this.logger.error({ err }, 'slack: processing an event failed');
            this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'slack: a payload Bolt could not read was refused');
            settle({ kind: 'unreadable' });
          },
        );
    });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
