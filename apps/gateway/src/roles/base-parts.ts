/**
 * The parts every process has, whatever its role: memory trim, Redis, the session store, the admin HTTP server.
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { SessionStore } from '@herald/agent-core';
import { buildAdminServer } from '../edges/admin/server.js';
import { openStoreWhenReachable } from '../edges/admin/wait-for-store.js';
import type { HeraldConfig } from '../support/config/load.js';
import { connectRedis, describeRedisTarget, redisTarget } from '../support/redis.js';
import { logConnectionErrors } from '../support/redis-errors.js';
import { exposedFullCollection, startMemoryTrim } from '../support/ops/memory-trim.js';
import { logFindings, redisFindings, refusals, storeFindings, UnsafeSetupError } from '../support/ops/safety/checks.js';
import { storeKind } from '../features/sessions/store-target.js';
import { opened, type Part, type StartContext } from './compose.js';

/** Memory a burst left behind goes back once this process is quiet again (support/ops/memory-trim.ts; needs --expose-gc). */
export function memoryTrimPart({ log }: StartContext): Part {
  let trim: { stop(): void } | undefined;
  return {
    name: 'memory trim',
    open: () => void (trim = startMemoryTrim({ gc: exposedFullCollection(), log: log.child({ component: 'memory' }) })),
    stop: async () => trim?.stop(),
  };
}

export class RedisPart implements Part {
  readonly name = 'redis';
  #client: Redis | undefined;
  #appends: Redis | null = null;
  readonly ready = {
    name: 'redis',
    check: async (): Promise<void> => {
      if (this.client.status !== 'ready') throw new Error(`not connected (${this.client.status})`);
      await this.client.ping();
    },
  };

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
  ) {}

  get client(): Redis {
    return opened(this.#client, 'redis');
  }

  /** The mailbox appends' own connection when they wait for replicas (HERALD_REDIS_WAIT_REPLICAS), else null. */
  get appends(): Redis | null {
    return this.#appends;
  }

  /** Whether Redis answers now (true before it is opened: nothing waits on it yet). */
  readonly isReady = (): boolean => this.#client === undefined || this.#client.status === 'ready';

  async open(): Promise<void> {
    const { log } = this.ctx;
    // Commands issued in one turn of the event loop go out in one write (ioredis auto-pipelining): under load the
    // mailbox steps of many turns share a socket write and a Redis read instead of one each.
    const target = redisTarget(this.config);
    const redis = (this.#client = await connectRedis(target, { enableAutoPipelining: true }));
    logConnectionErrors(log, 'main', redis);
    if (target.sentinels) log.info({ redis: describeRedisTarget(target) }, 'Redis through Sentinel: a failover moves every connection to the promoted replica');
    if (this.config.redisWaitReplicas > 0) logConnectionErrors(log, 'appends', (this.#appends = await connectRedis(target)));
    // What this Redis is set up to lose (persistence, eviction, version): warnings, except what BullMQ cannot work with.
    const redisSafety = await redisFindings(redis, this.config);
    logFindings(log, redisSafety);
    if (refusals(redisSafety).length > 0) throw new UnsafeSetupError(refusals(redisSafety));
  }

  async stop(): Promise<void> {
    this.#client?.disconnect();
    this.#appends?.disconnect();
  }
}

/** SQLite file or PostgreSQL; a database still booting is waited for, with /health/ready saying so. */
export class StorePart implements Part {
  readonly name = 'store';
  #store: SessionStore | undefined;
  readonly ready: Part['ready'];

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.ready = { name: storeKind(config), check: () => this.store.ping() };
  }

  get store(): SessionStore {
    return opened(this.#store, 'store');
  }

  async open(): Promise<void> {
    this.#store = await openStoreWhenReachable(this.config, this.ctx.log, this.signal);
    logFindings(this.ctx.log, await storeFindings(this.#store, this.config));
  }

  async stop(): Promise<void> {
    await this.#store?.close();
  }
}

/** The admin HTTP server: built early (platform webhooks and the API mount on it), listening once all is open. */
export class HttpPart implements Part {
  readonly name = 'http';
  #http: FastifyInstance | undefined;
  #url: string | undefined;

  /** `parts`: the process's parts, whose readiness checks /health/ready runs (in list order). */
  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly parts: () => readonly Part[],
  ) {}

  get http(): FastifyInstance {
    return opened(this.#http, 'http');
  }

  /** `http://host:port` it listens on. */
  get url(): string {
    return opened(this.#url, 'http');
  }

  async open(): Promise<void> {
    const checks = this.parts().flatMap((p) => (p.ready ? [p.ready] : []));
    this.#http = await buildAdminServer({ logger: this.ctx.log, checks });
  }

  async start(): Promise<void> {
    const { host, port: configured } = this.config;
    await this.http.listen({ host, port: configured });
    const addr = this.http.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : configured;
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }

  async stop(): Promise<void> {
    await this.#http?.close();
  }
}
