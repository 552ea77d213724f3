/**
 * Events API over HTTP on the gateway's fastify: a minimal Bolt `Receiver`.
 *
 * The route keeps the raw body (the signature covers the exact bytes), verifies it with Bolt's own
 * `isValidSlackRequest` (bad signature or a timestamp older than 5 minutes → 401, nothing handed over), answers
 * `url_verification` itself, and feeds everything else to `app.processEvent`. An event is answered 200 only once its
 * message was handed over (ack-gate.ts), within Slack's 3 s; a hand-over that failed or is still running gets a
 * 503, so Slack retries (and the retry gets the outcome of the hand-over still running). Slash commands and
 * button presses are answered as soon as Bolt acknowledges them: Herald's listeners ack first thing, except for a
 * slash command that queues a message, acknowledged once it was handed over or refused with a 503 (command-gate.ts).
 */
import { parse as parseQuery } from 'node:querystring';
import { isValidSlackRequest, type App, type Receiver } from '@slack/bolt';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { gateEvent, isEventCallback, DELIVERY_KEY } from './ack-gate.js';
import { COMMAND_ANSWER_KEY, CommandAnswer } from './command-gate.js';
import { SLACK_ACK_BUDGET_MS, SLACK_EVENTS_PATH } from './config.js';
import { webhookErrorHandler } from '../shared/route-errors.js';
import { isRecord } from '../shared/wire-values.js';

/** Bolt never acking (an unknown payload type) must not hold Slack's request open until its 3 s timeout. */
const ACK_DEADLINE_MS = 2_500;
const BODY_LIMIT_BYTES = 4 * 1024 * 1024;

type AckBody = Record<string, unknown> | string | undefined;
type DispatchAnswer = { kind: 'ack'; body: AckBody } | { kind: 'unreadable' } | { kind: 'refused' };

export class FastifyEventsReceiver implements Receiver {
  private app: App | null = null;
  private running = false;

  constructor(
    private readonly signingSecret: string,
    private readonly logger: Logger,
    /** The route: each Slack app has its own Request URL, checked against its own secret. */
    private readonly path: string = SLACK_EVENTS_PATH,
    private readonly ackBudgetMs: number = SLACK_ACK_BUDGET_MS,
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

    const retryHeader = header(req, 'x-slack-retry-num');
    const retryNum = retryHeader === undefined ? undefined : Number(retryHeader);
    const retryReason = header(req, 'x-slack-retry-reason');
    if (isEventCallback(payload)) return this.answerEvent(app, payload, retryNum, retryReason, reply);
    const answer = await this.dispatch(app, payload, retryNum, retryReason);
    if (answer.kind === 'unreadable') return void reply.code(400).send({ ok: false, error: 'unreadable_payload' });
    // A slash command that queues a message not handed over in time (command-gate.ts): Slack shows the user an error.
    if (answer.kind === 'refused') return void reply.code(503).send({ ok: false, error: 'not_taken_yet' });
    if (answer.body === undefined || answer.body === '') return void reply.code(200).send();
    return void reply.code(200).send(answer.body);
  }

  /** An event: 200 once its messages were handed over (ack-gate.ts); else 503, so Slack sends it again. */
  private async answerEvent(
    app: App,
    body: Record<string, unknown>,
    retryNum: number | undefined,
    retryReason: string | undefined,
    reply: FastifyReply,
  ): Promise<void> {
    const outcome = await gateEvent(
      (delivery) => app.processEvent({ body, retryNum, retryReason, ack: async () => {}, customProperties: { [DELIVERY_KEY]: delivery } }),
      this.ackBudgetMs,
    );
    if (outcome === 'taken') return void reply.code(200).send();
    if (outcome === 'unreadable') {
      this.logger.warn({ eventId: body.event_id }, 'slack: a payload Bolt could not read was refused');
      return void reply.code(400).send({ ok: false, error: 'unreadable_payload' });
    }
    this.logger.warn({ eventId: body.event_id, retryNum, outcome }, 'slack: event not acknowledged (its message is not handed over yet); Slack will retry');
    return void reply.code(503).send({ ok: false, error: 'not_taken_yet' });
  }

  /**
   * A slash command or an interaction: resolves when Bolt acks (or finishes without acking, or fails before
   * acking); processing goes on after. Herald's listeners ack first thing, so a failure before the ack is Bolt
   * failing to read the payload's shape (`event.user` null, `view` a
   * string, …): `unreadable`, which Slack's retry would not change.
   */
  private dispatch(app: App, body: Record<string, unknown>, retryNum: number | undefined, retryReason: string | undefined): Promise<DispatchAnswer> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (v: DispatchAnswer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(v);
      };
      // A gated listener (a slash command that queues, a button press) gives its verdict (ack or refuse) within the
      // same budget: wait for it.
      const answer = new CommandAnswer();
      void answer.refused.then(() => settle({ kind: 'refused' }));
      const deadline = setTimeout(() => {
        if (!answer.gated) settle({ kind: 'ack', body: undefined });
      }, ACK_DEADLINE_MS);
      app
        .processEvent({
          body,
          retryNum,
          retryReason,
          ack: async (response?: AckBody) => settle({ kind: 'ack', body: response }),
          customProperties: { [COMMAND_ANSWER_KEY]: answer },
        })
        .then(
          () => settle(answer.gated ? { kind: 'refused' } : { kind: 'ack', body: undefined }),
          (err: unknown) => {
            if (settled) return void this.logger.error({ err }, 'slack: processing an event failed');
            this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'slack: a payload Bolt could not read was refused');
            settle({ kind: 'unreadable' });
          },
        );
    });
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
