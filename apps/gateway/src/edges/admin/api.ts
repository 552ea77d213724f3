/**
 * The admin API under /admin: one encapsulated fastify context whose onRequest hook checks the bearer token,
 * so no route in it — the queue dashboard included — can be reached without it. Only mounted when
 * HERALD_ADMIN_TOKEN is set; otherwise every /admin route is a plain 404.
 */
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import type { SessionStore } from '@herald/agent-core';
import type { PairingService } from '../../features/pairing/index.js';
import { VERSION } from '../../support/version.js';
import { adminAuth } from './auth.js';
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
import type { BudgetGuard } from '../../features/budgets/guard.js';
import type { ProfileTable } from '../../features/profiles/table.js';
import type { Route } from '../../support/config/profile-schema.js';

export const OPENAPI_PATH = '/admin/openapi.json';

export interface AdminApiDeps {
  token: string;
  store: SessionStore;
  queue: Queue;
  pairing: PairingService;
  schedules: ScheduleService;
  profiles: ProfileTable;
  routes: readonly Route[];
  budgets: BudgetGuard;
}

export async function mountAdminApi(app: FastifyInstance, deps: AdminApiDeps): Promise<void> {
  await app.register(async (admin) => {
    const openapi = openApiCollector();
    openapi.attach(admin);
    admin.addHook('onRequest', adminAuth(deps.token));
    sessionRoutes(admin, deps.store);
    exportRoutes(admin, deps.store);
    queueRoutes(admin, deps.queue);
    pairingRoutes(admin, deps.pairing);
    scheduleRoutes(admin, deps.schedules);
    profileRoutes(admin, deps);
    budgetRoutes(admin, deps.budgets);
    admin.get(OPENAPI_PATH, { schema: { hide: true } }, async () => openapi.document({ title: 'Herald admin API', version: VERSION }));
    await mountQueueBoard(admin, deps.queue);
  });
}
