/**
 * Bull Board, the queue dashboard, at /admin/queues. It is registered inside the /admin context, so the same
 * token check guards it (see auth.ts for the browser cookie). Its own routes are hidden from the OpenAPI document.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { DASHBOARD_PATH } from './auth.js';

/** Query parameters Bull Board percent-decodes a second time (handlers/queues.js, handlers/jobSchedulers.js). */
const DECODED_AGAIN = new Set(['activeQueue', 'queueName']);

/**
 * Query values Bull Board cannot take answer 500 inside it; they name no queue or state, so they get a 400 first.
 * Two kinds, both found by the fuzz suite (test/fuzz/admin.e2e.test.ts): a value it percent-decodes a second time
 * (after fastify did) that is not valid percent-encoding, such as `%E0%A4%A`; and a NUL character anywhere, which
 * Bull Board uses as a separator inside its own validation messages (schemas/support.js).
 */
async function refuseUnreadableQuery(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) {
    const values = ([] as unknown[]).concat(value).filter((v): v is string => typeof v === 'string');
    const bad = name.includes('\0') || values.some((v) => v.includes('\0') || (DECODED_AGAIN.has(name) && !decodes(v)));
    if (bad) {
      await reply.code(400).send({ error: 'bad_request', message: `query parameter ${JSON.stringify(name)} holds a value the dashboard cannot read` });
      return;
    }
  }
}

function decodes(value: string): boolean {
  try {
    decodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
}

export async function mountQueueBoard(app: FastifyInstance, queue: Queue): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(queue)],
    // @bull-board/fastify pins its own copy of @bull-board/api; the two copies' types differ only nominally.
    serverAdapter: serverAdapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
    options: { uiConfig: { boardTitle: 'Herald queues' } },
  });
  await app.register(
    async (board) => {
      board.addHook('preHandler', refuseUnreadableQuery);
      await board.register(serverAdapter.registerPlugin());
    },
    { prefix: DASHBOARD_PATH },
  );
}
