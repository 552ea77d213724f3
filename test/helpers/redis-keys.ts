/** Cleaning up after a test on the shared Redis. */
import { Redis } from 'ioredis';

/** Deletes every key under `prefix:` on the shared Redis; fails (never hangs) when that Redis does not answer. */
export async function deleteRedisPrefix(prefix: string, url = 'redis://127.0.0.1:6379'): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: true });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
