/**
 * Scheduled tasks for the roles (roles/queue-parts.ts): the service every role uses (the tool on workers, /schedules on the ingress, the
 * admin API anywhere) over its own BullMQ queue, and on processes that run turns, the runner that turns due runs
 * into turns.
 */
import { Queue } from 'bullmq';
import type { SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';
import type { Logger } from '../../support/logger.js';
import { logConnectionErrors } from '../../support/redis-errors.js';
import { redisTarget } from '../../support/redis.js';
import { SCHEDULE_QUEUE, ScheduleService, type ScheduleJobData } from './service.js';
import { ScheduleStore } from './store.js';

export interface Schedules {
  service: ScheduleService;
  queue: Queue<ScheduleJobData>;
  close(): Promise<void>;
}

export function openSchedules(config: HeraldConfig, store: SessionStore, log: Logger): Schedules {
  const queue = new Queue<ScheduleJobData>(SCHEDULE_QUEUE, { connection: { ...redisTarget(config), maxRetriesPerRequest: null }, prefix: config.redisPrefix });
  logConnectionErrors(log, 'schedules queue', queue, queue.getBackend());
  const service = new ScheduleService({
    store: new ScheduleStore(store.sql),
    queue,
    defaultTimeZone: config.timezone,
    defaultSession: config.scheduleSession,
    maxPerUser: config.schedulesPerUser,
  });
  return { service, queue, close: () => queue.close() };
}

export { ScheduleRunner } from './runner.js';
