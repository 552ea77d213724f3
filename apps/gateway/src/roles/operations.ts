/**
 * Everything operational a process serves or runs besides its role, mounted in one call from roles/operations-part.ts:
 * GET /metrics, GET /health/detailed, the admin API (when HERALD_ADMIN_TOKEN is set) and, in processes that
 * run turns, the worker heartbeat. Call before the HTTP server listens; close on shutdown.
 */
import { ApprovalAudit } from '../features/approvals/audit.js';
import type { FastifyInstance } from 'fastify';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { SessionStore } from '@herald/agent-core';
import type { PlatformIngress } from '@herald/adapters';
import type { HeraldConfig } from '../support/config/load.js';
import type { ProviderCatalog } from '../support/config/providers.js';
import type { Logger } from '../support/logger.js';
import { TURN_QUEUE, type TurnWorker } from '../queue/worker.js';
import { warnIfPaused } from '../queue/paused.js';
import type { TurnJobData } from '../queue/producer.js';
import { logConnectionErrors } from '../support/redis-errors.js';
import { redisTarget } from '../support/redis.js';
import { WorkerHeartbeat } from '../support/ops/heartbeat.js';
import { QUEUE_STATES, type HeraldMetrics } from '../support/ops/metrics.js';
import type { PairingService } from '../features/pairing/index.js';
import { mountAdminApi } from '../edges/admin/api.js';
import { openKnowledge } from '../features/prompt/knowledge.js';
import { ProfileTable } from '../features/profiles/table.js';
import { budgetGuardFor } from '../features/budgets/guard.js';
import { detailedHealth, detailedHealthRoute } from '../edges/admin/health-detailed.js';
import { mountConsole } from '../edges/console/index.js';
import { PriceTable } from '../features/budgets/prices.js';
import { storeKind } from '../features/sessions/store-target.js';
import type { McpHub } from '../features/mcp/hub.js';
import type { ScheduleService } from '../features/schedules/service.js';
import type { McpServerStatus } from '../features/mcp/connection.js';
import type { SandboxHealth } from '../features/sandbox/index.js';

export interface OperationsDeps {
  config: HeraldConfig;
  http: FastifyInstance;
  redis: Redis;
  store: SessionStore;
  log: Logger;
  metrics: HeraldMetrics;
  worker: TurnWorker | null;
  ingresses: ReadonlyMap<string, PlatformIngress>;
  /** Scheduled tasks, listed and cancelled in the admin API. */
  schedules: ScheduleService;
  /** This process's MCP servers (processes that run turns), for /health/detailed and the heartbeat. */
  mcp: McpHub | null;
  /** The process's pairing service (features/sessions/services.ts), approved and revoked in the admin API. */
  pairing: PairingService;
  /** Key pools whose state /health/detailed shows. */
  providers: ProviderCatalog;
  /** execute_code's backend in this process (null where no turns run or no profile offers code). */
  sandbox: () => SandboxHealth | null;
}

export interface Operations {
  /** Starts the heartbeat (processes with a worker); call once the worker has started. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function mountOperations(deps: OperationsDeps): Promise<Operations> {
  const { config, http, metrics, worker } = deps;
  // Read-only use (counts, the dashboard, retrying failed jobs): its own connection, whatever the role.
  const queue = new Queue<TurnJobData>(TURN_QUEUE, { connection: { ...redisTarget(config), maxRetriesPerRequest: null }, prefix: config.redisPrefix });
  logConnectionErrors(deps.log, 'admin queue', queue, queue.getBackend());

  const mcpServers = (): McpServerStatus[] => deps.mcp?.status() ?? [];
  metrics.setSources({
    queueCounts: () => queue.getJobCounts(...QUEUE_STATES),
    queuePaused: () => queue.isPaused(),
    activeTurns: () => worker?.activeTurns ?? 0,
    mcpServers,
  });
  http.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
  const { sandbox } = deps;
  const healthDeps = { config, redis: deps.redis, queue, store: deps.store, ingresses: deps.ingresses, providers: deps.providers, mcpServers, sandbox };
  detailedHealthRoute(http, healthDeps);

  if (config.adminToken) {
    const { pairing } = deps;
    const knowledge = openKnowledge(config, deps.store.sql, deps.log.child({ component: 'knowledge' }));
    const approvals = new ApprovalAudit(deps.store.sql);
    await mountAdminApi(http, {
      token: config.adminToken,
      store: deps.store,
      queue,
      pairing,
      schedules: deps.schedules,
      profiles: new ProfileTable(config),
      routes: config.routes,
      budgets: budgetGuardFor(config, deps.store.sql),
      knowledge,
      approvals,
    });
    const started = Date.now();
    await mountConsole(http, {
      token: config.adminToken,
      store: deps.store,
      queue,
      pairing,
      approvals,
      log: deps.log.child({ component: 'console' }),
      health: () => detailedHealth(healthDeps, started),
      dependencies: [
        { name: 'Redis', check: async () => void (await deps.redis.ping()) },
        { name: storeKind(config) === 'postgres' ? 'PostgreSQL' : 'SQLite', check: () => deps.store.ping() },
      ],
      prices: new PriceTable(config.prices),
      profiles: new ProfileTable(config),
      knowledge,
    });
  } else {
    deps.log.info('admin API and console off: set HERALD_ADMIN_TOKEN to enable /admin and /console');
  }

  const heartbeat = worker
    ? new WorkerHeartbeat({ redis: deps.redis, prefix: config.redisPrefix, workerId: worker.id, runningTurns: () => worker.activeTurns, mcpServers, sandbox })
    : null;
  return {
    start: async () => {
      await heartbeat?.start();
      // A pause set in the queue dashboard outlives restarts: where turns would run, say why none does. Not awaited:
      // with Redis away the answer waits for it, and the start must not.
      if (worker) void warnIfPaused(queue, deps.log);
    },
    close: async () => {
      await heartbeat?.stop();
      await queue.close();
    },
  };
}
