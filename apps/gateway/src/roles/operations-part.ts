/**
 * /metrics, /health/detailed, the admin API and console, and the worker heartbeat (roles/operations.ts), as a part:
 * mounted before the admin server listens, the heartbeat started once the worker has.
 */
import type { HeraldConfig } from '../support/config/load.js';
import { mountOperations, type Operations } from './operations.js';
import { opened, type Part, type StartContext } from './compose.js';
import type { HttpPart, RedisPart, StorePart } from './base-parts.js';
import type { ServicesPart } from './services-part.js';
import type { SchedulesPart } from './queue-parts.js';
import type { RouterPart } from './ingress-parts.js';
import type { McpPart, WorkerPart } from './worker-parts.js';

export interface OperationsPartDeps {
  redis: RedisPart;
  store: StorePart;
  shared: ServicesPart;
  http: HttpPart;
  schedules: SchedulesPart;
  /** The platforms of an ingress process; none in a worker process. */
  routes: RouterPart | null;
  /** The queue worker of a process that runs turns; none in an ingress process. */
  worker: WorkerPart | null;
  mcp: McpPart | null;
}

export class OperationsPart implements Part {
  readonly name = 'operations';
  readonly needsRedis = true;
  #ops: Operations | undefined;

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly deps: OperationsPartDeps,
  ) {}

  async open(): Promise<void> {
    const { config, deps } = this;
    const { metrics, conversation, providers } = deps.shared.services;
    this.#ops = await mountOperations({
      config,
      http: deps.http.http,
      redis: deps.redis.client,
      store: deps.store.store,
      log: this.ctx.log,
      metrics,
      worker: deps.worker ? deps.worker.worker : null,
      ingresses: deps.routes ? deps.routes.ingresses : new Map(),
      mcp: deps.mcp ? deps.mcp.hub : null,
      schedules: deps.schedules.schedules.service,
      pairing: conversation.pairing,
      providers,
      sandbox: () => deps.worker?.sandbox() ?? null,
    });
  }

  async start(): Promise<void> {
    await this.ctx.untilStopped(opened(this.#ops, 'operations').start());
  }

  async stop(): Promise<void> {
    await this.#ops?.close();
  }
}
