/**
 * The worker role: the BullMQ worker that runs turns and replies through the platforms' REST APIs, with the
 * scheduled-task runner, the mailbox janitor and the store's retention.
 */
import type { HeraldConfig } from '../support/config/load.js';
import type { Part, StartContext } from './compose.js';
import { coreParts, type RoleParts } from './core.js';
import { ScheduleRunnerPart, WorkerPart, drainPart, housekeepingParts, mcpPart } from './worker-parts.js';
import { OperationsPart } from './operations-part.js';

export function workerRole(config: HeraldConfig, ctx: StartContext, signal: AbortSignal | undefined): RoleParts {
  const core = coreParts(config, ctx, signal, () => parts);
  const { trim, redis, store, shared, http, queue, schedules } = core;
  const mcp = mcpPart(config, ctx);
  const worker = new WorkerPart(config, ctx, { redis, store, shared, queue, schedules, mcp });
  const parts: Part[] = [
    trim,
    redis,
    store,
    shared,
    http,
    queue,
    schedules,
    ...(mcp ? [mcp] : []),
    worker,
    new ScheduleRunnerPart(config, ctx, { redis, shared, queue, schedules }),
    drainPart(config, shared, worker),
    ...housekeepingParts(config, ctx, { redis, store, shared, queue }),
    new OperationsPart(config, ctx, { redis, store, shared, http, schedules, routes: null, worker, mcp }),
  ];
  return { parts, core, routes: null, worker };
}
