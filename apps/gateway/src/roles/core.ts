/**
 * The parts every role is built on (Redis, the store, the shared services, the admin server, the queues), and
 * what a role hands back: its list of parts, and the parts the running process is read through.
 */
import type { HeraldConfig } from '../support/config/load.js';
import type { Part, StartContext } from './compose.js';
import { HttpPart, RedisPart, StorePart, memoryTrimPart } from './base-parts.js';
import { ServicesPart } from './services-part.js';
import { QueuePart, SchedulesPart } from './queue-parts.js';
import type { RouterPart } from './ingress-parts.js';
import type { WorkerPart } from './worker-parts.js';

export interface CoreParts {
  readonly trim: Part;
  readonly redis: RedisPart;
  readonly store: StorePart;
  readonly shared: ServicesPart;
  readonly http: HttpPart;
  readonly queue: QueuePart;
  readonly schedules: SchedulesPart;
}

/** A role's process: its parts in start order (stopped in reverse), and the ones a caller reads it through. */
export interface RoleParts {
  readonly parts: readonly Part[];
  readonly core: CoreParts;
  /** The ingress router and platforms; null in a worker process. */
  readonly routes: RouterPart | null;
  /** The queue worker; null in an ingress process. */
  readonly worker: WorkerPart | null;
}

/** `parts`: the whole list of the role, whose readiness checks the admin server runs. */
export function coreParts(config: HeraldConfig, ctx: StartContext, signal: AbortSignal | undefined, parts: () => readonly Part[]): CoreParts {
  const redis = new RedisPart(config, ctx);
  const store = new StorePart(config, ctx, signal);
  const shared = new ServicesPart(config, ctx, redis, store);
  return {
    trim: memoryTrimPart(ctx),
    redis,
    store,
    shared,
    http: new HttpPart(config, ctx, parts),
    queue: new QueuePart(config, ctx, redis, shared),
    schedules: new SchedulesPart(config, ctx, store),
  };
}
