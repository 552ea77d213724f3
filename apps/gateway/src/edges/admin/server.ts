/**
 * The admin HTTP server. Every process role serves it, so orchestrators can probe workers too.
 * Platform webhooks (Telegram, Slack Events) are mounted on the same instance by the ingress.
 */
import { fastify, type FastifyInstance } from 'fastify';
import type { Logger } from '../../support/logger.js';
import { rejectInfiniteNumbers } from './finite-numbers.js';
import { healthRoutes, type ReadinessCheck } from './health.js';

export interface AdminServerOptions {
  logger: Logger;
  checks: ReadinessCheck[];
}

export async function buildAdminServer(opts: AdminServerOptions): Promise<FastifyInstance> {
  const app = fastify({
    // Per-request lines at info level would drown the turn logs; warnings and errors still come through.
    loggerInstance: opts.logger.child({ component: 'http' }, { level: 'warn' }),
    // Slack's signature check and Telegram's secret header need the body as sent; 1 MiB covers both.
    bodyLimit: 1024 * 1024,
  });
  rejectInfiniteNumbers(app as unknown as FastifyInstance);
  await app.register(healthRoutes, { checks: opts.checks });
  // fastify types the instance by its logger class; the rest of the code only needs the base logger interface.
  return app as unknown as FastifyInstance;
}
