/**
 * Redis connections. BullMQ needs `maxRetriesPerRequest: null` on connections it blocks on; our own commands
 * use a separate client so a blocked worker connection never delays a lock renewal.
 */
import { Redis, type RedisOptions } from 'ioredis';

const CONNECT_TIMEOUT_MS = 5_000;

export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

/** Where we tried, said so a person can act on it (password hidden). */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

export function createRedis(url: string, opts: RedisOptions = {}): Redis {
  return new Redis(url, {
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
export async function connectRedis(url: string, opts: RedisOptions = {}): Promise<Redis> {
  let connected = false;
  const client = createRedis(url, {
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
      `Cannot reach Redis at ${describeRedisUrl(url)} (${reason}). Start one with \`redis-server\` ` +
        `(or \`docker compose up -d redis\`), or point REDIS_URL at yours.`,
    );
  }
}
