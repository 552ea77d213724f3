/**
 * The ingress role: platform connections, the router (commands, authorisation), the queue producer and the HTTP
 * API. Turns run in worker processes.
 */
import type { HeraldConfig } from '../support/config/load.js';
import type { Part, StartContext } from './compose.js';
import { coreParts, type RoleParts } from './core.js';
import { PlatformsPart, RouterPart, handOversPart, platformStatusPart } from './ingress-parts.js';
import { drainPart } from './worker-parts.js';
import { OperationsPart } from './operations-part.js';

export function ingressRole(config: HeraldConfig, ctx: StartContext, signal: AbortSignal | undefined): RoleParts {
  const core = coreParts(config, ctx, signal, () => parts);
  const { trim, redis, store, shared, http, queue, schedules } = core;
  const routes = new RouterPart(config, ctx, { redis, store, shared, http, queue, schedules, localWorker: false });
  const platforms = new PlatformsPart(ctx, routes);
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
    // Background work (the /new memory flush) gets the drain window.
    drainPart(config, shared, null),
    new OperationsPart(config, ctx, { redis, store, shared, http, schedules, routes, worker: null, mcp: null }),
    handOversPart(platforms),
    platforms,
  ];
  return { parts, core, routes, worker: null };
}
