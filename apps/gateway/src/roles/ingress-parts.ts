/**
 * The parts of a process that takes messages in: the router (commands, authorisation) with the HTTP API, the
 * hand-overs from the platforms to the router, and the platform connections.
 */
import type { HeraldConfig } from '../support/config/load.js';
import { DEFAULT_ACCOUNT } from '../support/config/profile-accounts.js';
import { workersSeenCheck } from '../support/ops/heartbeat.js';
import { IngressRouter } from '../edges/ingress/router.js';
import { InboundBoundary } from '../edges/ingress/handover.js';
import { createInboundGuard, UserRateLimiter } from '../edges/ingress/inbound-guard.js';
import { CommandLedger } from '../edges/commands/ledger.js';
import { mountApi } from '../edges/api/index.js';
import { ButtonStore } from '../features/interactions/buttons.js';
import { openApprovalDesk } from '../features/approvals/desk.js';
import { clarifyMarkerPrefix } from '../turn/clarify.js';
import { createIngresses, stampAccount, type IngressWithRoutes } from './platforms.js';
import { RedisPartsMemory } from '../edges/ingress/parts-memory.js';
import { RedisMatrixMemory } from '../edges/ingress/matrix-memory.js';
import { opened, type Part, type StartContext } from './compose.js';
import type { HttpPart, RedisPart, StorePart } from './base-parts.js';
import type { ServicesPart } from './services-part.js';
import type { QueuePart, SchedulesPart } from './queue-parts.js';

/** One line per platform: enabled, or why not. */
export function platformStatusPart(config: HeraldConfig, { log }: StartContext): Part {
  return {
    name: 'platform status',
    open: () => {
      for (const [platform, status] of Object.entries(config.platforms)) {
        if (status.enabled) log.info({ platform }, `${platform} enabled (${status.reason})`);
        else log.info({ platform }, `${platform} disabled: ${status.reason}`);
      }
    },
  };
}

export interface RouterPartDeps {
  redis: RedisPart;
  store: StorePart;
  shared: ServicesPart;
  http: HttpPart;
  queue: QueuePart;
  schedules: SchedulesPart;
  /** Whether this process runs turns too (then it needs no other worker to be ready). */
  localWorker: boolean;
}

/** The ingress router, the platforms' webhook routes and the HTTP API; its stop closes the API. */
export class RouterPart implements Part {
  readonly name = 'api';
  #router: IngressRouter | undefined;
  #ingresses: Map<string, IngressWithRoutes> | undefined;
  #api: { close(): Promise<void> } | undefined;

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly deps: RouterPartDeps,
  ) {}

  /** Ready once some worker is seen (read when the admin server is built, after Redis is open). */
  get ready(): Part['ready'] {
    return workersSeenCheck({ redis: this.deps.redis.client, prefix: this.config.redisPrefix, localWorker: this.deps.localWorker });
  }

  get router(): IngressRouter {
    return opened(this.#router, 'router');
  }

  get ingresses(): Map<string, IngressWithRoutes> {
    return opened(this.#ingresses, 'router');
  }

  async open(): Promise<void> {
    const { config, deps } = this;
    const { log } = this.ctx;
    const { policy, metrics, conversation } = deps.shared.services;
    if (policy.lockedDown) {
      log.warn('no user is allowed yet: set <PLATFORM>_ALLOWED_USERS or GATEWAY_ALLOWED_USERS (or *_ALLOW_ALL_USERS=true)');
    }
    this.#router = this.buildRouter();
    // Which parts of an album or a split text were taken lives in Redis, so several ingresses join them alike.
    const redis = deps.redis.client;
    const parts = (account: string) => new RedisPartsMemory(redis, config.redisPrefix, account);
    const matrixMemory = (userId: string) => new RedisMatrixMemory(redis, config.redisPrefix, userId);
    this.#ingresses = createIngresses(config, deps.shared.services.threads, log, parts, deps.shared.services.serviceWindow, matrixMemory);
    for (const ingress of this.#ingresses.values()) ingress.registerRoutes?.(deps.http.http);
    if (config.apiKeys.length > 0) {
      const { redis, store, http, queue } = deps;
      const { producer, control } = queue;
      const { mailbox } = deps.shared.services;
      this.#api = await mountApi({ config, http: http.http, redis: redis.client, store: store.store, producer, mailbox, control, conversation, metrics, log });
    } else {
      log.info('api disabled: HERALD_API_KEYS is not set');
    }
  }

  private buildRouter(): IngressRouter {
    const { config, deps } = this;
    const { log } = this.ctx;
    const redis = deps.redis.client;
    const { mailbox, policy, egress, metrics, conversation } = deps.shared.services;
    const guard = createInboundGuard({ metrics, limiter: new UserRateLimiter(redis, config.redisPrefix, config.userRateLimit), log });
    return new IngressRouter({
      store: deps.store.store,
      mailbox,
      control: deps.queue.control,
      producer: deps.queue.producer,
      ledger: new CommandLedger(redis, config.redisPrefix),
      policy,
      egress,
      log,
      guard,
      conversation,
      schedules: deps.schedules.schedules.service,
      answerMarkerPrefix: clarifyMarkerPrefix(config.redisPrefix),
      profiles: conversation.profiles,
      buttons: new ButtonStore(redis, config.redisPrefix),
      approvals: openApprovalDesk(redis, config.redisPrefix, deps.store.store.sql),
      onCompressed: (reason) => metrics.compressions.inc({ reason }),
    });
  }

  async stop(): Promise<void> {
    await this.#api?.close();
  }
}

/**
 * The platform connections, started last. Every platform's messages reach the router through one boundary: in
 * order per conversation, retried in memory while the router cannot take them (Redis briefly away); see
 * edges/ingress/handover.ts. Stopped first: the platforms stop (and hand-overs stop retrying), then in-flight
 * hand-overs are waited for (handOversPart).
 */
export class PlatformsPart implements Part {
  readonly name = 'ingresses';
  readonly #handover = new AbortController();
  #boundary: InboundBoundary | undefined;

  constructor(
    private readonly ctx: StartContext,
    private readonly routes: RouterPart,
  ) {}

  start(): void {
    const { log } = this.ctx;
    const boundary = (this.#boundary = new InboundBoundary(this.routes.router.handle, log, { signal: this.#handover.signal }));
    for (const [platform, ingress] of this.routes.ingresses) {
      // A platform that cannot connect must not take the others down; its health shows why. An extra bot account's
      // messages carry its name (roles/platforms.ts), so routes can pick its profile and replies go out through it.
      ingress
        .start(stampAccount(platform.split(':')[1] ?? DEFAULT_ACCOUNT, boundary.handle))
        .catch((err: unknown) => log.error({ err, platform }, `${platform} failed to start`));
    }
  }

  /** Resolves once no hand-over is in flight. */
  async idle(): Promise<void> {
    await this.#boundary?.idle();
  }

  async stop(): Promise<void> {
    if (!this.#boundary) return;
    this.#handover.abort();
    await Promise.all([...this.routes.ingresses.values()].map((i) => i.stop().catch((err: unknown) => this.ctx.log.warn({ err }, 'ingress stop failed'))));
  }
}

/** In-flight hand-overs, waited for once the platforms have stopped; they need Redis, so not when it is gone. */
export function handOversPart(platforms: PlatformsPart): Part {
  return { name: 'hand-overs', needsRedis: true, stop: () => platforms.idle() };
}
