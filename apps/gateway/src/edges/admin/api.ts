/**
 * The admin API under /admin: one encapsulated fastify context, behind an onRequest hook on the root instance
 * that checks the bearer token for every path under /admin before routing (auth.ts), so no route — the queue
 * dashboard included — can be reached, nor an unknown one told apart from a known one, without it. Only mounted
 * when HERALD_ADMIN_TOKEN is set; otherwise every /admin route is a plain 404.
 */
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import type { SessionStore } from '@herald/agent-core';
import type { PairingService } from '../../features/pairing/index.js';
import { VERSION } from '../../support/version.js';
import { adminGate } from './auth.js';
import { openApiCollector } from './openapi.js';
import { mountQueueBoard } from './queue-board.js';
import { pairingRoutes } from './routes-pairing.js';
import { queueRoutes } from './routes-queue.js';
import { sessionRoutes } from './routes-sessions.js';
import { scheduleRoutes } from './routes-schedules.js';
import type { ScheduleService } from '../../features/schedules/service.js';
import { exportRoutes } from './routes-export.js';
import { profileRoutes } from './routes-profiles.js';
import { budgetRoutes } from './routes-budgets.js';
import { knowledgeRoutes } from './routes-knowledge.js';
import type { Knowledge } from '../../features/prompt/knowledge.js';
import type { BudgetGuard } from '../../features/budgets/guard.js';
import type { ProfileTable } from '../../features/profiles/table.js';
import type { Route } from '../../support/config/profile-schema.js';
import type { ApprovalAudit } from '../../features/approvals/audit.js';
import { approvalRoutes } from './routes-approvals.js';

const OPENAPI_PATH = '/admin/openapi.json';

export interface AdminApiDeps {
  token: string;
  store: SessionStore;
  queue: Queue;
  pairing: PairingService;
  schedules: ScheduleService;
  profiles: ProfileTable;
  routes: readonly Route[];
  budgets: BudgetGuard;
  /** Session prompts and skills (features/prompt/knowledge.ts). */
  knowledge: Knowledge;
  /** The audit of approval decisions (GET /admin/approvals). */
  approvals: ApprovalAudit;
}

export async function mountAdminApi(app: FastifyInstance, deps: AdminApiDeps): Promise<void> {
  // On the instance given (the root), not in the context below: fastify's 404 for an unknown path runs the root's
  // hooks only.
  app.addHook('onRequest', adminGate(deps.token));
  await app.register(async (admin) => {
    const openapi = openApiCollector();
    openapi.attach(admin);
    sessionRoutes(admin, deps.store);
    exportRoutes(admin, deps.store);
    queueRoutes(admin, deps.queue);
    pairingRoutes(admin, deps.pairing);
    scheduleRoutes(admin, deps.schedules);
    profileRoutes(admin, deps);
    budgetRoutes(admin, deps.budgets);
    knowledgeRoutes(admin, deps);
    approvalRoutes(admin, deps.approvals);
    admin.get(OPENAPI_PATH, { schema: { hide: true } }, async () => openapi.document({ title: 'Herald admin API', version: VERSION }));
    await mountQueueBoard(admin, deps.queue);
  });
}
