/**
 * A Herald process: the parts of its role (roles/ingress.ts, roles/worker.ts, roles/all.ts), opened and started in
 * order and stopped in reverse (roles/compose.ts).
 *   ingress: platform connections, the router (commands, authorisation), the queue producer
 *   worker:  the BullMQ worker that runs turns and replies through the platforms' REST APIs
 *   all:     both, in one process
 * Every role serves the admin HTTP server (at least /health).
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { SessionStore } from '@herald/agent-core';
import type { HeraldConfig, Role } from '../support/config/load.js';
import type { Logger } from '../support/logger.js';
import type { TurnWorker } from '../queue/worker.js';
import type { IngressRouter } from '../edges/ingress/router.js';
import type { IngressWithRoutes } from './platforms.js';
import { CLOSE_GRACE_MS, compose, startContext, type StartContext } from './compose.js';
import type { RoleParts } from './core.js';
import { ingressRole } from './ingress.js';
import { workerRole } from './worker.js';
import { allRole } from './all.js';

export interface Herald {
  readonly config: HeraldConfig;
  readonly http: FastifyInstance;
  readonly redis: Redis;
  readonly store: SessionStore;
  readonly worker: TurnWorker | null;
  readonly ingresses: Map<string, IngressWithRoutes>;
  /** The ingress router (null on worker-only processes): what adapters hand their messages to. */
  readonly router: IngressRouter | null;
  /** `http://host:port` the admin server listens on. */
  readonly url: string;
  stop(): Promise<void>;
}

const ROLES: Record<Role, (config: HeraldConfig, ctx: StartContext, signal: AbortSignal | undefined) => RoleParts> = {
  ingress: ingressRole,
  worker: workerRole,
  all: allRole,
};

/**
 * Starts a process of `config.role`. Told to stop while starting (`signal`), or failing part-way, it stops what
 * it had opened and rethrows.
 */
export async function startHerald(config: HeraldConfig, log: Logger, signal?: AbortSignal): Promise<Herald> {
  const role = ROLES[config.role](config, startContext(log, signal), signal);
  const { redis, store, http } = role.core;
  const composed = await compose(role.parts, log, signal, redis.isReady);
  const worker = role.worker ? role.worker.worker : null;
  const url = http.url;
  log.info({ role: config.role, url, worker: worker?.id }, `Herald ${config.role} listening on ${url}`);
  let stopping: Promise<void> | null = null;
  // Turns get the drain timeout; closing what is left gets a short grace after it, then nothing is waited for.
  const stop = (): Promise<void> => (stopping ??= composed.stop(Date.now() + config.drainTimeoutMs + CLOSE_GRACE_MS));
  return {
    config,
    http: http.http,
    redis: redis.client,
    store: store.store,
    worker,
    ingresses: role.routes ? role.routes.ingresses : new Map(),
    router: role.routes ? role.routes.router : null,
    url,
    stop,
  };
}
