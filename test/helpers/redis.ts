/**
 * A Redis connection and a key prefix for one test file, on the shared Redis; every key under the prefix is
 * deleted after the file's tests, and the connection closed.
 */
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { deleteRedisPrefix } from './cluster.js';
import { testPrefix } from './test-run.js';

const TEST_REDIS_URL = 'redis://127.0.0.1:6379';

export function useTestRedis(label: string): { redis: Redis; prefix: string } {
  const prefix = testPrefix(label);
  const redis = new Redis(TEST_REDIS_URL);
  afterAll(async () => {
    await deleteRedisPrefix(prefix, TEST_REDIS_URL);
    redis.disconnect();
  });
  return { redis, prefix };
}
