/**
 * The turn queue in the admin API: counts by state, whether it is paused, the most recent failures, and retrying
 * failed jobs.
 * Retrying is always safe: a job only says "session K has mail", so a retried job whose messages were already
 * answered finds an empty mailbox and finishes at once.
 */
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { QUEUE_STATES } from '../../support/ops/metrics.js';

const RECENT_FAILURES = 20;
/** Jobs moved back to waiting per Redis round trip. */
const RETRY_BATCH = 1000;

const countsSchema = {
  type: 'object',
  properties: Object.fromEntries([...QUEUE_STATES, 'completed'].map((s) => [s, { type: 'integer' }])),
} as const;

export function queueRoutes(app: FastifyInstance, queue: Queue): void {
  app.get(
    '/admin/queue',
    {
      schema: {
        summary: 'Turn queue: jobs by state, whether it is paused, and the latest failures',
        tags: ['queue'],
        response: {
          200: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              paused: { type: 'boolean', description: 'Paused in the queue dashboard: messages wait, no turn starts until it is resumed' },
              counts: countsSchema,
              recent_failures: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'string' },
                    session_key: { type: ['string', 'null'] },
                    reason: { type: 'string' },
                    attempts: { type: 'integer' },
                    failed_at: { type: ['string', 'null'], format: 'date-time' },
                  },
                },
              },
            },
          },
        },
      },
    },
    async () => {
      const [counts, paused, failed] = await Promise.all([
        queue.getJobCounts(...QUEUE_STATES, 'completed'),
        queue.isPaused(),
        queue.getFailed(0, RECENT_FAILURES - 1),
      ]);
      return {
        name: queue.name,
        paused,
        counts,
        recent_failures: failed.map((j) => ({
          id: String(j.id),
          session_key: typeof j.data?.sessionKey === 'string' ? j.data.sessionKey : null,
          reason: j.failedReason ?? '',
          attempts: j.attemptsMade,
          failed_at: j.finishedOn ? new Date(j.finishedOn).toISOString() : null,
        })),
      };
    },
  );

  app.post(
    '/admin/queue/retry-failed',
    {
      schema: {
        summary: 'Move every failed turn job back to waiting',
        tags: ['queue'],
        response: { 200: { type: 'object', properties: { retried: { type: 'integer' } } } },
      },
    },
    async () => {
      const { failed } = await queue.getJobCounts('failed');
      if (failed > 0) await queue.retryJobs({ state: 'failed', count: RETRY_BATCH });
      return { retried: failed };
    },
  );
}
