/**
 * What Telegram ingress remembers of the parts it took, in real Redis: what one ingress process took, another sees (the
 * parts of one message behind a balancer), a split is continued once, and every key expires.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { PARTS_MEMORY_TTL_MS, RedisPartsMemory } from './parts-memory.js';
import { deleteRedisPrefix } from '../../../../../test/helpers/redis-keys.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';

const URL = 'redis://127.0.0.1:6379';
const prefix = testPrefix('parts');
// Two connections: two ingress processes.
const [a, b] = [new Redis(URL), new Redis(URL)];
const [memA, memB] = [new RedisPartsMemory(a, prefix, 'default'), new RedisPartsMemory(b, prefix, 'default')];

afterAll(async () => {
  await deleteRedisPrefix(prefix);
  a.disconnect();
  b.disconnect();
});

describe('RedisPartsMemory', () => {
  it('an album one process took is known to the other; another bot account’s is not', async () => {
    await memA.rememberAlbum('telegram:-5|g1');
    expect(await memB.hasAlbum('telegram:-5|g1')).toBe(true);
    expect(await memB.hasAlbum('telegram:-5|g2')).toBe(false);
    expect(await new RedisPartsMemory(b, prefix, 'other').hasAlbum('telegram:-5|g1')).toBe(false);
  });

  it('a split one process left open is continued by the other, once: taking it forgets it', async () => {
    const split = { id: '-5:10', messageId: 10, date: 1_000 };
    await memA.rememberSplit('telegram:-5|1', split);
    expect(await memB.openSplit('telegram:-5|1')).toEqual(split);
    const taken = await Promise.all([memA.takeSplit('telegram:-5|1'), memB.takeSplit('telegram:-5|1')]);
    expect(taken.filter((t) => t !== undefined)).toEqual([split]);
    expect(await memA.openSplit('telegram:-5|1')).toBeUndefined();
  });

  it('every key it writes expires; a value it cannot read is no open split', async () => {
    await memA.rememberAlbum('telegram:7|g3');
    await memA.rememberSplit('telegram:7|7', { id: '7:1', messageId: 1, date: 1 });
    const keys = [memA.key('album', 'telegram:7|g3'), memA.key('split', 'telegram:7|7')];
    for (const k of keys) {
      const ttl = await a.pttl(k);
      expect(ttl, k).toBeGreaterThan(0);
      expect(ttl, k).toBeLessThanOrEqual(PARTS_MEMORY_TTL_MS);
    }
    for (const stored of ['not json', '["7:1", 1, 1]', 'null']) {
      await a.set(memA.key('split', 'telegram:7|8'), stored, 'PX', 1_000);
      expect(await memB.takeSplit('telegram:7|8'), stored).toBeUndefined();
    }
  });
});
