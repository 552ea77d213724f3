/**
 * Bull Board, the queue dashboard, at /admin/queues. It is registered inside the /admin context, so the same
 * token check guards it (see auth.ts for the browser cookie). Its own routes are hidden from the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { DASHBOARD_PATH } from './auth.js';

export async function mountQueueBoard(app: FastifyInstance, queue: Queue): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(queue)],
    // @bull-board/fastify pins its own copy of @bull-board/api; the two copies' types differ only nominally.
    serverAdapter: serverAdapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
    options: { uiConfig: { boardTitle: 'Herald queues' } },
  });
  await app.register(serverAdapter.registerPlugin(), { prefix: DASHBOARD_PATH });
}
