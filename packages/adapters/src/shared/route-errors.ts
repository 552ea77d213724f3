/**
 * The error handler of the platforms' webhook routes (Telegram's webhook, Slack's Events URL). What fastify refuses
 * before the handler runs (a body that is not JSON, too large, of another content type) keeps its 4xx status and
 * fastify's description of the request's fault; anything else is a bug of ours: a 500 whose body says nothing more,
 * logged by its message. Never a stack trace, in the body or the log: fastify's default handler sends the internal
 * message in a 500's body and logs the stack.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export type RouteErrorHandler = (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function webhookErrorHandler(logger: Logger, route: string): RouteErrorHandler {
  return async (err, _req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      await reply.code(status).send({ ok: false, error: err.message });
      return;
    }
    logger.error({ err: err.message, route }, 'webhook request failed');
    await reply.code(500).send({ ok: false, error: 'internal error' });
  };
}
