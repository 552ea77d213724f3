/**
 * The parts of a process that runs turns: MCP servers, the queue worker (and its control subscriber), the
 * scheduled-task runner, the drain, the mailbox janitor and the store's retention.
 */
import type { Redis } from 'ioredis';
import type { Platform } from '@herald/adapters';
import type { HeraldConfig } from '../support/config/load.js';
import { createRedis, redisTarget } from '../support/redis.js';
import { logConnectionErrors } from '../support/redis-errors.js';
import { ControlBus } from '../queue/control.js';
import { TurnWorker } from '../queue/worker.js';
import type { BusyInputMode } from '../queue/producer.js';
import type { ProfileTable } from '../features/profiles/table.js';
import { MailboxJanitor } from '../queue/janitor.js';
import { abandonTurns } from '../turn/abandon.js';
import { buildAgentRuntime } from '../turn/agent-runtime.js';
import { instrumentAgent } from '../turn/instrument.js';
import { openOutboundServices } from '../out/services.js';
import { mediaLimits } from '../features/media/services.js';
import { McpHub } from '../features/mcp/hub.js';
import { ScheduleRunner } from '../features/schedules/index.js';
import { StoreRetention } from '../features/sessions/retention.js';
import { openSandbox, sandboxHealth, type SandboxDetection, type SandboxHealth } from '../features/sandbox/index.js';
import { apiTurnEnd } from '../edges/api/index.js';
import { opened, type Part, type StartContext } from './compose.js';
import type { RedisPart, StorePart } from './base-parts.js';
import type { ServicesPart } from './services-part.js';
import type { QueuePart, SchedulesPart } from './queue-parts.js';
import { buildTurnRunner } from './turn-runner.js';

/**
 * MCP servers: each process that runs turns holds its own connections (stdio servers are its children). Stopped
 * after the drain (listed before it), so a running turn keeps its servers to the end. Tools are discovered before
 * the first turn; a server that fails keeps being retried in the background.
 */
export class McpPart implements Part {
  readonly name = 'mcp';
  #hub: McpHub | undefined;

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
  ) {}

  get hub(): McpHub {
    return opened(this.#hub, 'mcp');
  }

  open(): void {
    this.#hub = new McpHub(this.config.mcpServers ?? [], { log: this.ctx.log.child({ component: 'mcp' }), limits: mediaLimits(this.config) });
  }

  async start(): Promise<void> {
    await this.hub.start();
  }

  async stop(): Promise<void> {
    await this.#hub?.close();
  }
}

/** The MCP part of a process that runs turns, when MCP servers are configured. */
export function mcpPart(config: HeraldConfig, ctx: StartContext): McpPart | null {
  return config.mcpServers?.length ? new McpPart(config, ctx) : null;
}

export interface WorkerPartDeps {
  redis: RedisPart;
  store: StorePart;
  shared: ServicesPart;
  queue: QueuePart;
  schedules: SchedulesPart;
  mcp: McpPart | null;
}

/** The BullMQ worker that runs turns; its stop closes the control subscriber (the drain stops the worker). */
export class WorkerPart implements Part {
  readonly name = 'subscriber';
  #subscriber: Redis | undefined;
  #worker: TurnWorker | undefined;
  #sandbox: SandboxDetection | null = null;
  /** A worker process is ready only once its queue worker takes jobs (not before start, not while closing). */
  readonly ready = {
    name: 'worker',
    check: (): void => {
      const reason = this.#worker ? this.#worker.notRunningReason() : 'queue worker not started';
      if (reason) throw new Error(reason);
    },
  };

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly deps: WorkerPartDeps,
  ) {}

  get worker(): TurnWorker {
    return opened(this.#worker, 'worker');
  }

  /** execute_code's backend as /health/detailed and the heartbeat show it; null when no profile offers code. */
  sandbox(): SandboxHealth | null {
    return this.#sandbox ? sandboxHealth(this.#sandbox) : null;
  }

  async open(): Promise<void> {
    const { config, deps } = this;
    const { log } = this.ctx;
    const shared = deps.shared.services;
    const agent = instrumentAgent(buildAgentRuntime(config, shared.providers), shared.metrics, shared.llmLog);
    // Files and voice replies; a speech model without its provider's settings stops start-up here, as the model does.
    const outbound = openOutboundServices(config, shared.conversation.voice, shared.providers);
    if (outbound.speech) log.info({ model: config.ttsModel, voice: config.ttsVoice }, 'voice replies available (/voice on)');
    if (!agent) log.warn('HERALD_MODEL is not set: turns will answer with a setup hint');
    const subscriber = (this.#subscriber = createRedis(redisTarget(config)));
    logConnectionErrors(log, 'subscriber', subscriber);
    await this.ctx.untilStopped(subscriber.connect());
    const [redis, store, mailbox] = [deps.redis.client, deps.store.store, shared.mailbox];
    const schedules = deps.schedules.schedules.service;
    // Found once: each profile that offers code shares the backend (features/sandbox/wiring.ts logs the choice).
    const profiles = shared.conversation.profiles.list();
    const sandbox = (this.#sandbox = await this.ctx.untilStopped(
      openSandbox(
        config,
        profiles.map((p) => p.toolsets),
        log.child({ component: 'sandbox' }),
      ),
    ));
    this.#worker = new TurnWorker({
      connection: redisTarget(config),
      prefix: config.redisPrefix,
      mailbox,
      control: new ControlBus(redis, subscriber, config.redisPrefix),
      // The turn's policies (metrics first) and stages: turn/pipeline.ts.
      runTurn: buildTurnRunner({ config, log, redis, store, shared, agent, outbound, mcp: deps.mcp ? deps.mcp.hub : null, schedules, sandbox }),
      onAbandon: abandonTurns({ store, mailbox, egress: shared.egress }),
      onTurnEnd: apiTurnEnd(shared.replies),
      concurrency: config.workerConcurrency,
      // Each profile's mode, read once (the profile table does not change while the process runs).
      busyInputMode: busyInputModes(shared.conversation.profiles),
      log: log.child({ component: 'worker' }),
      jobLockMs: config.jobLockMs,
      stalledIntervalMs: config.stalledIntervalMs,
      watchdogMs: config.turnWatchdogS * 1000,
      redisReady: deps.redis.isReady,
    });
  }

  async start(): Promise<void> {
    await this.ctx.untilStopped(this.worker.start());
  }

  /** Running turns get the drain timeout (drainPart). */
  async drain(timeoutMs: number): Promise<void> {
    await this.#worker?.close(timeoutMs);
  }

  async stop(): Promise<void> {
    this.#subscriber?.disconnect();
  }
}

/** Due runs of scheduled tasks become turns (one job per run, whichever worker takes it). */
export class ScheduleRunnerPart implements Part {
  readonly name = 'schedule runner';
  readonly needsRedis = true;
  #runner: ScheduleRunner | undefined;

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly deps: Pick<WorkerPartDeps, 'redis' | 'shared' | 'queue' | 'schedules'>,
  ) {}

  open(): void {
    const { config, deps } = this;
    const { producer } = deps.queue;
    const { policy } = deps.shared.services;
    const schedules = deps.schedules.schedules;
    this.#runner = new ScheduleRunner({
      connection: redisTarget(config),
      prefix: config.redisPrefix,
      store: schedules.service.store,
      queue: schedules.queue,
      submit: (key, payload) => producer.submitScheduled(key, payload),
      ownerAllowed: (platform, userId) => policy.isAllowed(platform as Platform, userId),
      log: this.ctx.log.child({ component: 'schedules' }),
    });
  }

  async start(): Promise<void> {
    const { log } = this.ctx;
    await this.ctx.untilStopped(opened(this.#runner, 'schedule runner').start());
    // Job schedulers Redis lost (or kept after a cancel it missed) are put right from the store's record.
    this.deps.schedules.schedules.service.reconcile(this.deps.redis.client, this.config.redisPrefix, log).then(
      ({ restored, removed }) => (restored || removed) && log.info({ restored, removed }, 'scheduled tasks reconciled with Redis'),
      (err: unknown) => log.warn({ err }, 'could not reconcile scheduled tasks with Redis; will try at the next start'),
    );
  }

  async stop(): Promise<void> {
    await this.#runner?.close();
  }
}

/** Running turns (when this process has a worker) and background work share the drain window, side by side. */
export function drainPart(config: HeraldConfig, shared: ServicesPart, worker: WorkerPart | null): Part {
  return {
    name: 'drain',
    stop: () => Promise.all([worker?.drain(config.drainTimeoutMs), shared.services.background.settle(config.drainTimeoutMs)]),
  };
}

/** Wake-up jobs for stranded mailboxes (queue/janitor.ts), and the store's old turns and threads deleted. */
export function housekeepingParts(config: HeraldConfig, ctx: StartContext, deps: Pick<WorkerPartDeps, 'redis' | 'store' | 'shared' | 'queue'>): Part[] {
  let janitor: MailboxJanitor | undefined;
  let retention: StoreRetention | undefined;
  const { redisPrefix: prefix } = config;
  const openJanitor = (): void => {
    janitor = new MailboxJanitor({
      redis: deps.redis.client,
      prefix,
      mailbox: deps.shared.services.mailbox,
      queue: deps.queue.queue,
      log: ctx.log.child({ component: 'janitor' }),
      intervalMs: config.janitorIntervalMs,
    });
    janitor.start();
  };
  const openRetention = (): void => {
    retention = new StoreRetention({
      redis: deps.redis.client,
      prefix,
      store: deps.store.store,
      threads: deps.shared.services.threads,
      log: ctx.log.child({ component: 'retention' }),
      turnRetentionDays: config.turnRetentionDays,
      threadRetentionDays: config.threadRetentionDays,
    });
    retention.start();
  };
  return [
    { name: 'janitor', needsRedis: true, open: openJanitor, stop: async () => janitor?.stop() },
    { name: 'retention', needsRedis: true, open: openRetention, stop: async () => retention?.stop() },
  ];
}

/** The profiles' busy-input modes for the worker: by profile name, the default profile's for any other. */
function busyInputModes(profiles: ProfileTable): { byProfile: ReadonlyMap<string, BusyInputMode>; fallback: BusyInputMode } {
  return { byProfile: new Map(profiles.list().map((p) => [p.name, p.busyInputMode])), fallback: profiles.get(undefined).busyInputMode };
}
