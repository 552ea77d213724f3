/**
 * What ingress and worker parts share in one process: the conversation services, the model catalog and its key
 * pools, metrics, mailboxes, egress, the access policy. Opened once Redis and the store are; its stop writes the
 * key pools' last uses (after the drain, since stops run in reverse).
 */
import { providerLabel } from '@herald/agent-core';
import type { PlatformEgress } from '@herald/adapters';
import type { HeraldConfig } from '../support/config/load.js';
import type { Logger } from '../support/logger.js';
import { Mailbox } from '../queue/mailbox.js';
import { ReplicaWait } from '../queue/replica-wait.js';
import type { Redis } from 'ioredis';
import { accessPolicy, type AccessPolicy } from '../edges/ingress/inbound-guard.js';
import { openConversationServices, type ConversationServices } from '../features/sessions/services.js';
import { KnownThreads } from '../features/sessions/known-threads.js';
import { BackgroundTasks } from '../features/sessions/background-tasks.js';
import { spendMetrics } from '../features/budgets/meter.js';
import { ProviderCatalog } from '../support/config/providers.js';
import { RedisKeyPoolState } from '../features/llm/redis-key-state.js';
import { createHeraldMetrics, type HeraldMetrics } from '../support/ops/metrics.js';
import { instrumentProvider } from '../turn/instrument.js';
import { ReplyPublisher, createApiEgress } from '../edges/api/index.js';
import { RedisServiceWindow } from '../edges/ingress/service-window.js';
import { createEgressRegistry } from './platforms.js';
import { opened, type Part, type StartContext } from './compose.js';
import type { RedisPart, StorePart } from './base-parts.js';

export interface SharedServices {
  /** Work started behind a reply (the /new memory flush): stopping waits for it, side by side with running turns. */
  readonly background: BackgroundTasks;
  readonly llmLog: Logger;
  readonly providers: ProviderCatalog;
  readonly metrics: HeraldMetrics;
  readonly conversation: ConversationServices;
  readonly mailbox: Mailbox;
  /** The HTTP API's answers go back through Redis to the ingress holding the request (edges/api/reply-channel.ts). */
  readonly replies: ReplyPublisher;
  readonly egress: (platform: string, account?: string) => PlatformEgress;
  /** WhatsApp's 24-hour windows: the ingresses write them, every egress reads them. */
  readonly serviceWindow: RedisServiceWindow;
  readonly threads: KnownThreads;
  readonly policy: AccessPolicy;
}

export class ServicesPart implements Part {
  /** Its stop is the key pools' last write. */
  readonly name = 'key uses';
  readonly needsRedis = true;
  #services: SharedServices | undefined;
  #keyState: RedisKeyPoolState | undefined;

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly redis: RedisPart,
    private readonly store: StorePart,
  ) {}

  get services(): SharedServices {
    return opened(this.#services, 'services');
  }

  open(): void {
    const { config, ctx } = this;
    const redis = this.redis.client;
    const store = this.store.store;
    const background = new BackgroundTasks(ctx.log);
    // One key-pool catalog per process; the pools' state lives in Redis so every process skips a spent key.
    const llmLog = ctx.log.child({ component: 'llm' });
    const keyState = (this.#keyState = new RedisKeyPoolState(redis, config.redisPrefix, llmLog));
    const providers = new ProviderCatalog(config, {
      keyState,
      onTransportReset: (e) =>
        llmLog.warn(
          { provider: e.provider, model: e.model, key: e.fingerprint, error: e.error },
          'LLM connection failed; HTTP client rebuilt before the retry',
        ),
    });
    const metrics = createHeraldMetrics();
    // Pairing, reset policy, per-session counters and models, progress settings (features/sessions/services.ts).
    const conversation = openConversationServices(
      config,
      store,
      background,
      providers,
      {
        wrap: (p) => instrumentProvider(p, metrics, llmLog),
        onFallback: (e) =>
          llmLog.warn(
            { from: providerLabel(e.from), to: providerLabel(e.to), error: e.error.message, status: e.error.status },
            'side task: model failed; the next model takes it',
          ),
      },
      (err) => llmLog.warn({ err }, 'learnt context windows: the store could not be read or written; this process keeps its own'),
      // One price table and spend report per process (the report keeps the cache-hit ratios): conversation.pricing,
      // which the turns' team controls use too.
      spendMetrics(metrics),
      ctx.log,
    );
    const replies = new ReplyPublisher(redis, config.redisPrefix);
    const serviceWindow = new RedisServiceWindow(redis, config.redisPrefix);
    this.#services = {
      background,
      llmLog,
      providers,
      metrics,
      conversation,
      mailbox: new Mailbox(redis, config.redisPrefix, config.sessionLockMs, replicaWait(config, this.redis.appends, metrics)),
      replies,
      serviceWindow,
      egress: createEgressRegistry(config, ctx.log, { api: createApiEgress(replies) }, serviceWindow),
      threads: new KnownThreads(store.sql),
      policy: accessPolicy(config, (platform, userId) => conversation.pairing.isApproved(platform, userId)),
    };
  }

  async stop(): Promise<void> {
    await this.#keyState?.flush();
  }
}

/** Appends wait for replicas when HERALD_REDIS_WAIT_REPLICAS asks for it (RedisPart then opened their connection). */
function replicaWait(config: HeraldConfig, appends: Redis | null, metrics: HeraldMetrics): ReplicaWait | null {
  if (config.redisWaitReplicas === 0 || appends === null) return null;
  return new ReplicaWait(appends, {
    replicas: config.redisWaitReplicas,
    timeoutMs: config.redisWaitTimeoutMs,
    markKey: `${config.redisPrefix}:append-mark`,
    onOutcome: (outcome) => metrics.replicaWaits.inc({ outcome }),
  });
}
