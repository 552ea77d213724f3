/**
 * Redis connections. BullMQ needs `maxRetriesPerRequest: null` on connections it blocks on; our own commands
 * use a separate client so a blocked worker connection never delays a lock renewal.
 *
 * Every client — ours and BullMQ's — is built from one RedisTarget (redisTarget below): REDIS_URL alone, or
 * REDIS_URL's password, database and TLS plus the Sentinels that name the current primary (ioredis' own
 * Sentinel support: after a failover it asks them again and reconnects to the promoted replica).
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { HeraldConfig } from './config/load.js';

const CONNECT_TIMEOUT_MS = 5_000;

export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

/** Where we tried, said so a person can act on it (password hidden). */
function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/**
 * Where Redis is: what `new Redis(url, rest)` takes, and what BullMQ's `connection` takes as is (it passes `url`
 * and the rest to ioredis the same way).
 */
export type RedisTarget = { url: string } & Pick<
  RedisOptions,
  'sentinels' | 'name' | 'sentinelPassword' | 'enableTLSForSentinelMode' | 'sentinelTLS' | 'reconnectOnError'
>;

type TargetSettings = Pick<HeraldConfig, 'redisUrl' | 'redisSentinels' | 'redisSentinelName' | 'redisSentinelPassword' | 'redisSentinelTls'>;

export function redisTarget(config: TargetSettings): RedisTarget {
  const sentinels = config.redisSentinels ?? [];
  if (sentinels.length === 0) return { url: config.redisUrl };
  return {
    url: config.redisUrl,
    name: config.redisSentinelName,
    sentinels: sentinels.map((hostPort) => {
      const at = hostPort.lastIndexOf(':');
      return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
    }),
    ...(config.redisSentinelPassword ? { sentinelPassword: config.redisSentinelPassword } : {}),
    ...(config.redisSentinelTls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    // A primary demoted while we were connected answers writes with READONLY: reconnect (through the Sentinels, to
    // the promoted one) but never resend the command (1, not 2): a resent WAIT would confirm writes it never saw.
    reconnectOnError: (err) => err.message.startsWith('READONLY') && 1,
  };
}

/** `redis://127.0.0.1:6379` or `sentinels 10.0.0.5:26379,… (mymaster)`, for start-up lines and errors. */
export function describeRedisTarget(target: RedisTarget): string {
  if (!target.sentinels) return describeRedisUrl(target.url);
  return `Sentinels ${target.sentinels.map((s) => `${s.host}:${s.port}`).join(',')} (primary group ${target.name})`;
}

export function createRedis(target: RedisTarget, opts: RedisOptions = {}): Redis {
  const { url, ...where } = target;
  return new Redis(url, {
    ...where,
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Reconnect forever with a capped backoff: readiness reports the outage, the process stays up.
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    ...opts,
  });
}

/**
 * Connects and PINGs once, failing fast with a message that says where we tried and how to start Redis.
 * Once connected, the client reconnects forever with a capped backoff; readiness reports while it is away.
 */
export async function connectRedis(target: RedisTarget, opts: RedisOptions = {}): Promise<Redis> {
  let connected = false;
  const client = createRedis(target, {
    ...opts,
    retryStrategy: (times) => (connected ? Math.min(times * 200, 5_000) : null),
  });
  let lastError: NodeJS.ErrnoException | null = null;
  client.on('error', (err: NodeJS.ErrnoException) => {
    // ioredis emits errors on every failed reconnect; the health check reports them, not the log spam.
    lastError = err;
  });
  try {
    await client.connect();
    await client.ping();
    connected = true;
    return client;
  } catch (err) {
    client.disconnect();
    const cause = lastError ?? (err as NodeJS.ErrnoException);
    const reason = cause.code ?? cause.message;
    throw new RedisUnavailableError(
      `Cannot reach Redis at ${describeRedisTarget(target)} (${reason}). Start one with \`redis-server\` ` +
        `(or \`docker compose up -d redis\`), or point ${target.sentinels ? 'REDIS_SENTINELS' : 'REDIS_URL'} at yours.`,
    );
  }
}
