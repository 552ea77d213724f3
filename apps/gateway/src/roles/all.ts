/**
 * The all role (the default): ingress and worker in one process.
 */
import type { HeraldConfig } from '../support/config/load.js';
import type { Part, StartContext } from './compose.js';
import { coreParts, type RoleParts } from './core.js';
import { PlatformsPart, RouterPart, handOversPart, platformStatusPart } from './ingress-parts.js';
import { ScheduleRunnerPart, WorkerPart, drainPart, housekeepingParts, mcpPart } from './worker-parts.js';
import { OperationsPart } from './operations-part.js';

export function allRole(config: HeraldConfig, ctx: StartContext, signal: AbortSignal | undefined): RoleParts {
  const core = coreParts(config, ctx, signal, () => parts);
  const { trim, redis, store, shared, http, queue, schedules } = core;
  const routes = new RouterPart(config, ctx, { redis, store, shared, http, queue, schedules, localWorker: true });
  const platforms = new PlatformsPart(ctx, routes);
  const mcp = mcpPart(config, ctx);
  const worker = new WorkerPart(config, ctx, { redis, store, shared, queue, schedules, mcp });
  const parts: Part[] = [
    platformStatusPart(config, ctx),
    trim,
    redis,
    store,
    shared,
    http,
    queue,
    schedules,
    routes,
    ...(mcp ? [mcp] : []),
    worker,
    new ScheduleRunnerPart(config, ctx, { redis, shared, queue, schedules }),
    drainPart(config, shared, worker),
    ...housekeepingParts(config, ctx, { redis, store, shared, queue }),
    new OperationsPart(config, ctx, { redis, store, shared, http, schedules, routes, worker, mcp }),
    handOversPart(platforms),
    platforms,
  ];
  return { parts, core, routes, worker };
}
