/**
 * Health routes. `/health` is liveness: no dependency is touched, so an orchestrator never restarts a process
 * because Redis blinked. `/health/ready` asks every dependency and names what failed.
 */
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { VERSION } from '../../support/version.js';

export interface ReadinessCheck {
  name: string;
  /** Resolves when healthy; rejects (or throws) with a reason otherwise. */
  check: () => Promise<void> | void;
}

export interface HealthOptions {
  checks: ReadinessCheck[];
  /** Per-check time limit: a hung dependency must not hang the probe. */
  timeoutMs?: number;
}

const CHECK_TIMEOUT_MS = 2_000;

const healthSchema = {
  response: {
    200: {
      type: 'object',
      properties: { status: { type: 'string' }, version: { type: 'string' }, uptime_s: { type: 'number' } },
      required: ['status', 'version', 'uptime_s'],
    },
  },
} as const;

const readySchema = {
  response: {
    '2xx': {
      type: 'object',
      properties: { status: { type: 'string' }, checks: { type: 'object', additionalProperties: { type: 'string' } } },
    },
    503: {
      type: 'object',
      properties: {
        status: { type: 'string' },
        failed: { type: 'array', items: { type: 'string' } },
        checks: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
} as const;

const plugin: FastifyPluginAsync<HealthOptions> = async (app, opts) => {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? CHECK_TIMEOUT_MS;

  app.get('/health', { schema: healthSchema }, async () => ({
    status: 'ok',
    version: VERSION,
    uptime_s: Math.round((Date.now() - started) / 1000),
  }));

  app.get('/health/ready', { schema: readySchema }, async (_req, reply) => {
    const results = await Promise.all(opts.checks.map((c) => runCheck(c, timeoutMs)));
    const checks: Record<string, string> = {};
    const failed: string[] = [];
    for (const r of results) {
      checks[r.name] = r.error ?? 'ok';
      if (r.error) failed.push(r.name);
    }
    if (failed.length > 0) return reply.code(503).send({ status: 'unavailable', failed, checks });
    return { status: 'ready', checks };
  });
};

async function runCheck(c: ReadinessCheck, timeoutMs: number): Promise<{ name: string; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(c.check),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { name: c.name };
  } catch (err) {
    return { name: c.name, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes = fp(plugin, { name: 'herald-health' });
