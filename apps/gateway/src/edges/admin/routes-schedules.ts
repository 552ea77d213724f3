/**
 * Scheduled tasks in the admin API: every user's tasks (filter by status, platform, owner), one task, and
 * cancelling any task (its owner cancels their own with /schedules).
 */
import type { FastifyInstance } from 'fastify';
import type { ScheduleService, ScheduleWithNext } from '../../features/schedules/service.js';
import type { ScheduleStatus } from '../../features/schedules/store.js';
import { errorSchema } from './schemas.js';

const nullableString = { type: ['string', 'null'] } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

const scheduleSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['active', 'done', 'cancelled'] },
    kind: { type: 'string', enum: ['cron', 'once'] },
    cron: nullableString,
    run_at: nullableTime,
    timezone: { type: 'string' },
    next_run_at: nullableTime,
    prompt: { type: 'string' },
    session_mode: { type: 'string', enum: ['own', 'origin'] },
    platform: { type: 'string' },
    owner_id: { type: 'string' },
    owner_name: nullableString,
    conversation_id: { type: 'string' },
    chat_type: { type: 'string' },
    session_key: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    last_run_at: nullableTime,
    run_count: { type: 'integer' },
  },
} as const;

function scheduleJson(s: ScheduleWithNext): Record<string, unknown> {
  return {
    id: s.id,
    status: s.status,
    kind: s.when.kind,
    cron: s.when.kind === 'cron' ? s.when.cron : null,
    run_at: s.when.kind === 'once' ? iso(s.when.runAt) : null,
    timezone: s.timeZone,
    next_run_at: iso(s.nextRunAt),
    prompt: s.prompt,
    session_mode: s.sessionMode,
    platform: s.platform,
    owner_id: s.ownerId,
    owner_name: s.ownerName ?? null,
    conversation_id: s.conversationId,
    chat_type: s.chatType,
    session_key: s.sessionKey,
    created_at: iso(s.createdAt),
    last_run_at: iso(s.lastRunAt),
    run_count: s.runCount,
  };
}

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } } as const;

export function scheduleRoutes(app: FastifyInstance, schedules: ScheduleService): void {
  app.get<{ Querystring: { status?: ScheduleStatus; platform?: string; user?: string; limit?: number } }>(
    '/admin/schedules',
    {
      schema: {
        summary: 'Scheduled tasks, newest first',
        tags: ['schedules'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: ['active', 'done', 'cancelled'] },
            platform: { type: 'string', minLength: 1 },
            user: { type: 'string', minLength: 1, description: 'owner user id (with platform)' },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
        },
        response: { 200: { type: 'object', properties: { schedules: { type: 'array', items: scheduleSchema } } } },
      },
    },
    async (req) => {
      const { status, platform, user, limit } = req.query;
      return { schedules: (await schedules.list({ status, platform, ownerId: user, limit })).map(scheduleJson) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/admin/schedules/:id',
    { schema: { summary: 'One scheduled task', tags: ['schedules'], params: idParams, response: { 200: scheduleSchema, 404: errorSchema } } },
    async (req, reply) => {
      const found = await schedules.get(req.params.id);
      return found ? scheduleJson(found) : reply.code(404).send({ error: 'not_found', message: `no scheduled task ${req.params.id}` });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/admin/schedules/:id/cancel',
    {
      schema: {
        summary: 'Cancel a scheduled task (it will not run again)',
        tags: ['schedules'],
        params: idParams,
        response: { 200: { type: 'object', properties: { cancelled: { type: 'boolean' } } }, 404: errorSchema, 409: errorSchema },
      },
    },
    async (req, reply) => {
      switch (await schedules.cancel(req.params.id)) {
        case 'cancelled':
          return { cancelled: true };
        case 'not_active':
          return reply.code(409).send({ error: 'not_active', message: `scheduled task ${req.params.id} has already finished or been cancelled` });
        case 'not_found':
          return reply.code(404).send({ error: 'not_found', message: `no scheduled task ${req.params.id}` });
      }
    },
  );
}
