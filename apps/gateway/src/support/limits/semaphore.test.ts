/** The Redis semaphore: a caller over the limit waits (never fails) and gets the slot the moment one is released. */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisSemaphore } from './semaphore.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';

const redis = new Redis('redis://127.0.0.1:6379');
const key = testPrefix('sem');

afterAll(async () => {
  await redis.del(`${key}:a`, `${key}:b`, `${key}:c`);
  redis.disconnect();
});

describe('RedisSemaphore', () => {
  it('lets `limit` holders in across clients; the next waits until one releases', async () => {
    const other = new Redis('redis://127.0.0.1:6379');
    try {
      const a = new RedisSemaphore(redis, `${key}:a`, 2);
      const b = new RedisSemaphore(other, `${key}:a`, 2); // another worker, same semaphore
      const first = await a.acquire();
      const second = await b.acquire();
      expect(await a.holders()).toBe(2);
      let waited = 0;
      let third: { release(): Promise<void> } | null = null;
      const pending = b.acquire(undefined, () => void waited++).then((s) => (third = s));
      // It is waiting (it polled at least twice), and has not got in.
      await new Promise<void>((resolve) => {
        const look = setInterval(() => waited >= 2 && (clearInterval(look), resolve()), 5);
      });
      expect(third).toBeNull();
      await first.release();
      await pending;
      expect(third).not.toBeNull();
      expect(await a.holders()).toBe(2);
      await second.release();
      await third!.release();
      expect(await a.holders()).toBe(0);
    } finally {
      other.disconnect();
    }
  });

  it('a waiting caller whose signal aborts stops waiting with the reason', async () => {
    const s = new RedisSemaphore(redis, `${key}:b`, 1);
    const held = await s.acquire();
    const controller = new AbortController();
    const waiting = s.acquire(controller.signal, () => controller.abort(new Error('stopped by the user')));
    await expect(waiting).rejects.toThrow('stopped by the user');
    await held.release();
  });

  it('a holder that died (no renewal) frees its slot when its lease runs out', async () => {
    const dead = new RedisSemaphore(redis, `${key}:c`, 1, { leaseMs: 200 });
    await redis.eval("redis.call('ZADD', KEYS[1], 0, 'ghost')", 1, `${key}:c`); // a lease that expired long ago
    const slot = await dead.acquire();
    expect(await redis.zscore(`${key}:c`, 'ghost')).toBeNull();
    await slot.release();
  });
});
