/**
 * A paused turn queue (the queue dashboard's Pause): BullMQ keeps the pause in Redis, so it outlives restarts, and
 * while it lasts messages are taken and wait but no turn starts. What an operator is told about it, and how it is
 * asked, for the places that say so (a worker starting on one, `herald doctor`).
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../support/logger.js';
import { TURN_QUEUE } from './worker.js';

export const PAUSED_QUEUE_HINT = 'paused: messages wait and no turn starts until it is resumed (Resume in the queue dashboard, /admin/queues)';

/** Logs a warning when `queue` is paused; a Redis that does not answer says nothing (its own errors are logged). */
export async function warnIfPaused(queue: Queue, log: Logger): Promise<void> {
  const paused = await queue.isPaused().catch(() => false);
  if (paused) log.warn({ queue: queue.name }, `the turn queue is ${PAUSED_QUEUE_HINT}`);
}

/** Whether the turn queue under `prefix` is paused, asked on an open connection (left open). */
export async function turnQueuePaused(redis: Redis, prefix: string): Promise<boolean> {
  const queue = new Queue(TURN_QUEUE, { connection: redis, prefix });
  try {
    return await queue.isPaused();
  } finally {
    await queue.close();
  }
}
