/**
 * Wiring: builds the services a role needs, starts them in order, and stops them in reverse.
 *   ingress: platform connections, the router (commands, authorisation), the queue producer
 *   worker:  the BullMQ worker that runs turns and replies through the platforms' REST APIs
 *   all:     both, in one process
 * Every role serves the admin HTTP server (at least /health).
 */
import type { FastifyInstance } from 'fastify';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { providerLabel, type SessionStore } from '@herald/agent-core';
import type { Platform } from '@herald/adapters';
import { buildAdminServer } from '../edges/admin/server.js';
import type { HeraldConfig } from '../support/config/load.js';
import type { Logger } from '../support/logger.js';
import { connectRedis, createRedis } from '../support/redis.js';
import { abortable, settledWithin } from '../support/settle.js';
import { Mailbox } from '../queue/mailbox.js';
import { ControlBus } from '../queue/control.js';
import { JOB_RETENTION, TurnProducer, type TurnJobData } from '../queue/producer.js';
import { TURN_QUEUE, TurnWorker } from '../queue/worker.js';
import { MailboxJanitor } from '../queue/janitor.js';
import { IngressRouter } from '../edges/ingress/router.js';
import { CommandLedger } from '../edges/commands/ledger.js';
import { ButtonStore } from '../features/interactions/buttons.js';
import { InboundBoundary } from '../edges/ingress/handover.js';
import { accessPolicy } from '../edges/ingress/authorize.js';
import { openConversationServices } from '../features/sessions/services.js';
import { storeKind } from '../features/sessions/store-target.js';
import { KnownThreads } from '../features/sessions/known-threads.js';
import { StoreRetention } from '../features/sessions/retention.js';
import { openStoreWhenReachable } from '../edges/admin/wait-for-store.js';
import { createEgressRegistry, createFilesRegistry, createIngresses, stampAccount, type IngressWithRoutes } from './platforms.js';
import { RedisPartsMemory } from '../edges/ingress/parts-memory.js';
import { DEFAULT_ACCOUNT } from '../support/config/profile-accounts.js';
import { ProfileRuntimes } from '../turn/profile-runtimes.js';
import { createTeamControls } from '../turn/team-controls.js';
import { spendMetrics } from '../support/ops/spend-metrics.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';
import { createMediaServices, mediaLimits } from '../features/media/services.js';
import { PrepGate } from '../turn/prep-gate.js';
import { createTurnRunner } from '../turn/pipeline.js';
import { abandonTurns } from '../turn/abandon.js';
import { buildAgentRuntime } from '../turn/agent-runtime.js';
import { ProviderCatalog } from '../support/config/providers.js';
import { RedisKeyPoolState } from '../features/llm/redis-key-state.js';
import { createTurnTools } from '../turn/tools.js';
import { openOutboundServices } from '../out/services.js';
import { clarifyMarkerKey } from '../turn/clarify.js';
import { createHeraldMetrics } from '../support/ops/metrics.js';
import { instrumentAgent, instrumentProvider, turnMetrics } from '../turn/instrument.js';
import { createInboundGuard } from '../edges/ingress/inbound-guard.js';
import { UserRateLimiter } from '../support/ops/rate-limit.js';
import { workersSeenCheck } from '../support/ops/heartbeat.js';
import { exposedFullCollection, startMemoryTrim } from '../support/ops/memory-trim.js';
import { BackgroundTasks } from '../features/sessions/background-tasks.js';
import { logConnectionErrors } from '../support/redis-errors.js';
import { mountOperations } from './operations.js';
import { ReplyPublisher, apiRelayFor, apiTurnEnd, createApiEgress, mountApi } from '../edges/api/index.js';
import { logFindings, redisFindings, refusals, storeFindings, UnsafeSetupError } from '../support/ops/safety/checks.js';
import { McpHub } from '../features/mcp/hub.js';
import { ScheduleRunner, openSchedules } from '../features/schedules/index.js';

export interface Herald {
  readonly config: HeraldConfig;
  readonly http: FastifyInstance;
  readonly redis: Redis;
  readonly store: SessionStore;
  readonly worker: TurnWorker | null;
  readonly ingresses: Map<string, IngressWithRoutes>;
  /** The ingress router (null on worker-only processes): what adapters hand their messages to. */
  readonly router: IngressRouter | null;
  /** `http://host:port` the admin server listens on. */
  readonly url: string;
  stop(): Promise<void>;
}

/** After the drain timeout, how long closing connections may take before stop() gives up on them. */
export const CLOSE_GRACE_MS = 2_000;

interface OpenedPart {
  what: string;
  close: () => Promise<unknown>;
  /** Closing it needs Redis: when Redis is unreachable at that point, the shutdown does not wait for it. */
  needsRedis: boolean;
}

export async function startHerald(config: HeraldConfig, log: Logger, signal?: AbortSignal): Promise<Herald> {
  // Everything opened so far, closed in reverse order: by stop(), or at once when a later start-up step fails
  // (or the process is told to stop while starting), so nothing is left connected behind a failed start.
  const opened: OpenedPart[] = [];
  let redisReady = (): boolean => true;
  const closeAll = async (deadline?: number): Promise<void> => {
    const abandoned: string[] = [];
    for (const { what, close, needsRedis } of opened.splice(0).reverse()) {
      const closing = close().catch((err: unknown) => log.warn({ err, what }, 'close failed'));
      if (deadline === undefined) {
        await closing;
        continue;
      }
      // A stop has a deadline: Redis being gone, or a part hanging, must not keep the process from exiting.
      const waitMs = needsRedis && !redisReady() ? 0 : Math.max(deadline - Date.now(), 0);
      if (!(await settledWithin(closing, waitMs))) abandoned.push(what);
    }
    if (abandoned.length > 0) {
      const why = redisReady() ? 'the shutdown deadline passed' : 'Redis is unreachable';
      log.warn({ abandoned }, `shutdown: did not wait for ${abandoned.join(', ')} (${why})`);
    }
  };
  try {
    return await build(config, log, {
      onStop: (what, close, opts) => opened.push({ what, close, needsRedis: opts?.needsRedis === true }),
      watchRedis: (ready) => (redisReady = ready),
      signal,
      closeAll,
    });
  } catch (err) {
    // Told to stop while starting: the same deadline as a stop, since what is pending may be waiting on a dead Redis.
    await closeAll(signal?.aborted ? Date.now() + CLOSE_GRACE_MS : undefined);
    throw err;
  }
}

type OnStop = (what: string, close: () => Promise<unknown>, opts?: { needsRedis?: boolean }) => void;

interface Lifecycle {
  onStop: OnStop;
  /** Tells the shutdown how to know whether Redis is reachable. */
  watchRedis: (ready: () => boolean) => void;
  signal: AbortSignal | undefined;
  closeAll: (deadline?: number) => Promise<void>;
}

async function build(config: HeraldConfig, log: Logger, { onStop, watchRedis, signal, closeAll }: Lifecycle): Promise<Herald> {
  const hasIngress = config.role !== 'worker';
  const hasWorker = config.role !== 'ingress';
  if (hasIngress) {
    for (const [platform, status] of Object.entries(config.platforms)) {
      if (status.enabled) log.info({ platform }, `${platform} enabled (${status.reason})`);
      else log.info({ platform }, `${platform} disabled: ${status.reason}`);
    }
  }
  // Memory a burst left behind goes back once this process is quiet again (support/ops/memory-trim.ts; needs --expose-gc).
  const trim = startMemoryTrim({ gc: exposedFullCollection(), log: log.child({ component: 'memory' }) });
  onStop('memory trim', async () => trim.stop());
  // A stop asked for during start-up ends it between steps (the step in progress finishes first).
  const stillStarting = (): void => signal?.throwIfAborted();
  // Steps that wait for Redis to answer end at once on a stop: Redis may be gone, and they would wait for it.
  const untilStopped = <T>(step: Promise<T>): Promise<T> => (signal ? abortable(step, signal) : step);

  // Commands issued in one turn of the event loop go out in one write (ioredis auto-pipelining): under load the
  // mailbox steps of many turns share a socket write and a Redis read instead of one each.
  const redis = await connectRedis(config.redisUrl, { enableAutoPipelining: true });
  onStop('redis', async () => redis.disconnect());
  const redisReady = (): boolean => redis.status === 'ready';
  watchRedis(redisReady);
  logConnectionErrors(log, 'main', redis);
  // What this Redis is set up to lose (persistence, eviction, version): warnings, except what BullMQ cannot work with.
  const redisSafety = await redisFindings(redis, config);
  logFindings(log, redisSafety);
  if (refusals(redisSafety).length > 0) throw new UnsafeSetupError(refusals(redisSafety));
  stillStarting();
  // SQLite file or PostgreSQL; a database still booting is waited for, with /health/ready saying so.
  const store = await openStoreWhenReachable(config, log, signal);
  onStop('store', () => store.close());
  logFindings(log, await storeFindings(store, config));
  stillStarting();
  // Work started behind a reply (the /new memory flush): stopping waits for it, side by side with running turns.
  const background = new BackgroundTasks(log);
  // Pairing, reset policy, per-session counters and models, progress settings (features/sessions/services.ts).
  // One key-pool catalog per process; the pools' state lives in Redis so every process skips a spent key.
  const llmLog = log.child({ component: 'llm' });
  const keyState = new RedisKeyPoolState(redis, config.redisPrefix, llmLog);
  // After the drain (stops run in reverse): the drained turns' key uses are written too.
  onStop('key uses', () => keyState.flush(), { needsRedis: true });
  const providers = new ProviderCatalog(config, {
    keyState,
    onTransportReset: (e) => llmLog.warn({ provider: e.provider, model: e.model, key: e.fingerprint, error: e.error }, 'LLM connection failed; HTTP client rebuilt before the retry'),
  });
  const metrics = createHeraldMetrics();
  const conversation = openConversationServices(
    config,
    store,
    background,
    providers,
    {
      wrap: (p) => instrumentProvider(p, metrics, llmLog),
      onFallback: (e) => llmLog.warn({ from: providerLabel(e.from), to: providerLabel(e.to), error: e.error.message, status: e.error.status }, 'side task: model failed; the next model takes it'),
    },
    (err) => llmLog.warn({ err }, 'learnt context windows: the store could not be read or written; this process keeps its own'),
    // One price table and spend report per process (the report keeps the cache-hit ratios): conversation.pricing,
    // which the turns' team controls use too.
    spendMetrics(metrics),
  );
  const mailbox = new Mailbox(redis, config.redisPrefix, config.sessionLockMs);
  // The HTTP API's answers go back through Redis to the ingress holding the request (edges/api/reply-channel.ts).
  const replies = new ReplyPublisher(redis, config.redisPrefix);
  const egress = createEgressRegistry(config, log, { api: createApiEgress(replies) });
  const bullConnection = { url: config.redisUrl, maxRetriesPerRequest: null };
  const threads = new KnownThreads(store.sql);

  const http = await buildAdminServer({
    logger: log,
    checks: [
      {
        name: 'redis',
        check: async () => {
          if (redis.status !== 'ready') throw new Error(`not connected (${redis.status})`);
          await redis.ping();
        },
      },
      { name: storeKind(config), check: () => store.ping() },
      ...(hasIngress ? [workersSeenCheck({ redis, prefix: config.redisPrefix, localWorker: hasWorker })] : []),
      ...(hasWorker
        ? [
            {
              // A worker process is ready only once its queue worker takes jobs (not before start, not while closing).
              name: 'worker',
              check: () => {
                const reason = worker ? worker.notRunningReason() : 'queue worker not started';
                if (reason) throw new Error(reason);
              },
            },
          ]
        : []),
    ],
  });
  onStop('http', () => http.close());

  // Ingress adds a job per message; workers add wake-up jobs for stranded mailboxes (queue/janitor.ts).
  const queue = new Queue<TurnJobData>(TURN_QUEUE, { connection: bullConnection, prefix: config.redisPrefix, defaultJobOptions: JOB_RETENTION });
  logConnectionErrors(log, 'queue', queue, queue.getBackend());
  onStop('queue', () => queue.close(), { needsRedis: true });
  // Ingress puts messages in mailboxes; workers put due scheduled tasks there (features/schedules/runner.ts).
  const control = new ControlBus(redis, null, config.redisPrefix);
  const producer = new TurnProducer(queue, mailbox, control, log);
  // Scheduled tasks: rows in the store, BullMQ job schedulers on a queue of their own.
  const schedules = openSchedules(config, store, log.child({ component: 'schedules' }));
  onStop('schedules', () => schedules.close(), { needsRedis: true });
  const policy = accessPolicy(config, (platform, userId) => conversation.pairing.isApproved(platform, userId));
  let ingresses = new Map<string, IngressWithRoutes>();
  let router: IngressRouter | null = null;
  if (hasIngress) {
    if (policy.lockedDown) {
      log.warn('no user is allowed yet: set <PLATFORM>_ALLOWED_USERS or GATEWAY_ALLOWED_USERS (or *_ALLOW_ALL_USERS=true)');
    }
    const guard = createInboundGuard({ metrics, limiter: new UserRateLimiter(redis, config.redisPrefix, config.userRateLimit), log });
    router = new IngressRouter({
      store,
      mailbox,
      control,
      producer,
      ledger: new CommandLedger(redis, config.redisPrefix),
      policy,
      egress,
      log,
      guard,
      conversation,
      schedules: schedules.service,
      answerMarker: (sessionKey) => clarifyMarkerKey(config.redisPrefix, sessionKey),
      profiles: conversation.profiles,
      buttons: new ButtonStore(redis, config.redisPrefix),
      onCompressed: (reason) => metrics.compressions.inc({ reason }),
    });
    ingresses = createIngresses(config, threads, log, (account) => new RedisPartsMemory(redis, config.redisPrefix, account));
    for (const ingress of ingresses.values()) ingress.registerRoutes?.(http);
    if (config.apiKeys.length > 0) {
      const api = await mountApi({ config, http, redis, store, producer, mailbox, control, conversation, metrics, log });
      onStop('api', () => api.close());
    } else {
      log.info('api disabled: HERALD_API_KEYS is not set');
    }
  }

  let worker: TurnWorker | null = null;
  // MCP servers: each process that runs turns holds its own connections (stdio servers are its children). Closed
  // after the drain below (registered before it), so a running turn keeps its servers to the end.
  const mcp = hasWorker && config.mcpServers?.length ? new McpHub(config.mcpServers, { log: log.child({ component: 'mcp' }), limits: mediaLimits(config) }) : null;
  if (mcp) onStop('mcp', () => mcp.close());
  if (hasWorker) {
    const agent = instrumentAgent(buildAgentRuntime(config, providers), metrics, llmLog);
    const toolsLog = log.child({ component: 'tools' });
    // Files and voice replies; a speech model without its provider's settings stops start-up here, as the model does.
    const outbound = openOutboundServices(config, conversation.voice, providers);
    if (outbound.speech) log.info({ model: config.ttsModel, voice: config.ttsVoice }, 'voice replies available (/voice on)');
    if (!agent) log.warn('HERALD_MODEL is not set: turns will answer with a setup hint');
    const subscriber = createRedis(config.redisUrl);
    logConnectionErrors(log, 'subscriber', subscriber);
    onStop('subscriber', async () => subscriber.disconnect());
    await untilStopped(subscriber.connect());
    worker = new TurnWorker({
      connection: { url: config.redisUrl },
      prefix: config.redisPrefix,
      mailbox,
      control: new ControlBus(redis, subscriber, config.redisPrefix),
      // The turn's policies (metrics first) and stages: turn/pipeline.ts.
      runTurn: createTurnRunner({
        store,
        countTurn: turnMetrics({ metrics, store }),
        agent,
        egress,
        conversation,
        // Each profile's agent (model, prompt, budget) and tools (toolsets, MCP servers, notes), built now: a
        // profile whose model cannot be used stops the start, as HERALD_MODEL does.
        profiles: new ProfileRuntimes(conversation.profiles, (profile) => {
          const own = profile.name === DEFAULT_PROFILE ? agent : instrumentAgent(buildAgentRuntime(config, providers, profile), metrics, llmLog);
          const files = { limits: outbound.limits.file, perTurn: outbound.limits.perTurn };
          const sideProvider = conversation.sideTasks.forSession(profile.name === DEFAULT_PROFILE ? null : (profile.model ?? null));
          const tools = createTurnTools({ config: { ...config, toolsets: profile.toolsets }, store, agent: own, sideProvider, redis, mcp, schedules: schedules.service, log: toolsLog, files, profile });
          return { profile, agent: own, tools };
        }),
        // Cost per call, budgets, the profiles' concurrent-turn limits and the global LLM cap.
        controls: createTeamControls({ config, budgets: conversation.budgets, pricing: conversation.pricing, redis, profiles: conversation.profiles }),
        prepGate: new PrepGate(config.turnPrepLimit),
        onPossibleDuplicate: (platform) => metrics.possibleDuplicateReplies.inc({ platform }),
        outbound,
        media: createMediaServices(config, createFilesRegistry(config, log), conversation.sideTasks.describer()),
        relay: apiRelayFor(replies, (err) => log.warn({ err }, 'streaming to an API request failed')),
      }),
      onAbandon: abandonTurns({ store, mailbox, egress }),
      onTurnEnd: apiTurnEnd(replies),
      concurrency: config.workerConcurrency,
      busyInputMode: (entry) => conversation.profiles.get(entry.payload.profile).busyInputMode,
      log: log.child({ component: 'worker' }),
      jobLockMs: config.jobLockMs,
      stalledIntervalMs: config.stalledIntervalMs,
      watchdogMs: config.turnWatchdogS * 1000,
      redisReady,
    });
  }
  // Due runs of scheduled tasks become turns (one job per run, whichever worker takes it).
  const runner = hasWorker
    ? new ScheduleRunner({ connection: { url: config.redisUrl }, prefix: config.redisPrefix, store: schedules.service.store, queue: schedules.queue, submit: (key, payload) => producer.submitScheduled(key, payload), ownerAllowed: (platform, userId) => policy.isAllowed(platform as Platform, userId), log: log.child({ component: 'schedules' }) })
    : null;
  if (runner) onStop('schedule runner', () => runner.close(), { needsRedis: true });
  // Running turns and background work share the drain window, side by side.
  const drainingWorker = worker;
  onStop('drain', () => Promise.all([drainingWorker?.close(config.drainTimeoutMs), background.settle(config.drainTimeoutMs)]));
  if (hasWorker) {
    const janitor = new MailboxJanitor({ redis, prefix: config.redisPrefix, mailbox, queue, log: log.child({ component: 'janitor' }), intervalMs: config.janitorIntervalMs });
    janitor.start();
    onStop('janitor', () => janitor.stop(), { needsRedis: true });
    const retention = new StoreRetention({
      redis,
      prefix: config.redisPrefix,
      store,
      threads,
      log: log.child({ component: 'retention' }),
      turnRetentionDays: config.turnRetentionDays,
      threadRetentionDays: config.threadRetentionDays,
    });
    retention.start();
    onStop('retention', () => retention.stop(), { needsRedis: true });
  }

  const ops = await mountOperations({ config, http, redis, store, log, metrics, worker, ingresses, mcp, schedules: schedules.service, pairing: conversation.pairing, providers });
  onStop('operations', () => ops.close(), { needsRedis: true });
  await http.listen({ host: config.host, port: config.port });
  const addr = http.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  stillStarting();

  // Tools are discovered before the first turn; a server that fails keeps being retried in the background.
  await mcp?.start();
  stillStarting();
  if (worker) await untilStopped(worker.start());
  if (runner) {
    await untilStopped(runner.start());
    // Job schedulers Redis lost (or kept after a cancel it missed) are put right from the store's record.
    schedules.service.reconcile(redis, config.redisPrefix, log).then(
      ({ restored, removed }) => (restored || removed) && log.info({ restored, removed }, 'scheduled tasks reconciled with Redis'),
      (err: unknown) => log.warn({ err }, 'could not reconcile scheduled tasks with Redis; will try at the next start'),
    );
  }
  await untilStopped(ops.start());
  stillStarting();
  // Every platform's messages reach the router through one boundary: in order per conversation, retried in
  // memory while the router cannot take them (Redis briefly away); see edges/ingress/handover.ts.
  const handover = new AbortController();
  const boundary = router ? new InboundBoundary(router.handle, log, { signal: handover.signal }) : null;
  // Closed in reverse: the platforms stop first (and hand-overs stop retrying), then in-flight hand-overs are
  // waited for; they need Redis, so not when it is gone.
  onStop('hand-overs', async () => boundary?.idle(), { needsRedis: true });
  onStop('ingresses', async () => {
    handover.abort();
    await Promise.all([...ingresses.values()].map((i) => i.stop().catch((err: unknown) => log.warn({ err }, 'ingress stop failed'))));
  });
  for (const [platform, ingress] of ingresses) {
    // A platform that cannot connect must not take the others down; its health shows why. An extra bot account's
    // messages carry its name (roles/platforms.ts), so routes can pick its profile and replies go out through it.
    ingress.start(stampAccount(platform.split(':')[1] ?? DEFAULT_ACCOUNT, boundary!.handle)).catch((err: unknown) => log.error({ err, platform }, `${platform} failed to start`));
  }
  log.info({ role: config.role, url, worker: worker?.id }, `Herald ${config.role} listening on ${url}`);

  let stopping: Promise<void> | null = null;
  // Turns get the drain timeout; closing what is left gets a short grace after it, then nothing is waited for.
  const stop = (): Promise<void> => (stopping ??= closeAll(Date.now() + config.drainTimeoutMs + CLOSE_GRACE_MS));
  return { config, http, redis, store, worker, ingresses, router, url, stop };
}
