/**
 * Several real gateway processes sharing one Redis prefix and one SQLite file: an ingress and N workers, or a
 * single `all` process. Cleans its Redis keys and temp files on stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startGateway, type GatewayProcess } from './gateway.js';
import { deleteRedisPrefix } from './redis-keys.js';
import { testPrefix } from './test-run.js';

export { deleteRedisPrefix };

export interface Cluster {
  prefix: string;
  dbPath: string;
  ingress: GatewayProcess;
  workers: GatewayProcess[];
  /** Starts one more worker with the same settings. */
  addWorker(): Promise<GatewayProcess>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  env: Record<string, string>;
  /** 0: one process with role `all`; otherwise an ingress plus this many workers. */
  workers: number;
}

export { testPrefix as uniquePrefix };

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-cluster-'));
  const dbPath = join(dir, 'herald.db');
  const prefix = opts.env.HERALD_REDIS_PREFIX ?? testPrefix('cluster');
  const env = { ...opts.env, HERALD_DB: dbPath, HERALD_REDIS_PREFIX: prefix };
  const started: GatewayProcess[] = [];
  const start = async (role: string): Promise<GatewayProcess> => {
    const gw = await startGateway({ env, args: ['--role', role] });
    started.push(gw);
    return gw;
  };
  try {
    const ingress = await start(opts.workers === 0 ? 'all' : 'ingress');
    const workers: GatewayProcess[] = [];
    for (let i = 0; i < opts.workers; i++) workers.push(await start('worker'));
    return {
      prefix,
      dbPath,
      ingress,
      workers,
      addWorker: async () => {
        const w = await start('worker');
        workers.push(w);
        return w;
      },
      stop: async () => {
        await Promise.all(started.map((g) => g.stop()));
        await deleteRedisPrefix(prefix);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(started.map((g) => g.stop('SIGKILL')));
    await deleteRedisPrefix(prefix);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The process holding a session's lock — the one running its turn — read from Redis: the lock's value is
 * `<host>:<pid>:<id>:<fence>` (queue/mailbox.ts). Undefined while nobody holds it.
 */
export async function lockHolder(cluster: Cluster, sessionKey: string, url = 'redis://127.0.0.1:6379'): Promise<GatewayProcess | undefined> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    const value = await redis.get(`${cluster.prefix}:lock:${sessionKey}`);
    const pid = value ? Number(value.split(':').at(-3)) : NaN;
    return [cluster.ingress, ...cluster.workers].find((p) => p.proc.pid === pid);
  } finally {
    redis.disconnect();
  }
}

/** Lock and stall settings shorter still than the defaults (queue/leases.ts: about 4.5 s), for tests that kill workers often. */
export const FAST_TAKEOVER_ENV = { HERALD_SESSION_LOCK_MS: '1500', HERALD_JOB_LOCK_MS: '1500', HERALD_STALLED_INTERVAL_MS: '1000' } as const;
