import { describe, expect, it } from 'vitest';
import { KeyPool } from '@herald/agent-core';
import { useTestRedis } from '../../../../../test/helpers/redis.js';
import { RedisKeyPoolState } from './redis-key-state.js';

const { redis, prefix } = useTestRedis('keystate');

describe('RedisKeyPoolState use counts', () => {
  it('gathers uses in the process and writes them in one round trip: read back the same before and after, never twice', async () => {
    const state = new RedisKeyPoolState(redis, prefix);
    const pool = new KeyPool({ label: 'one', keys: ['sk-only'], state });
    const [fp] = pool.fingerprints;
    for (let i = 0; i < 5; i++) expect(await pool.acquire(new Set())).toMatchObject({ fingerprint: fp });
    // Not written yet, but this process sees its own uses.
    expect(await redis.hget(`${prefix}:keypool:one:uses`, fp)).toBeNull();
    expect((await pool.status())[0]).toMatchObject({ fingerprint: fp, uses: 5 });
    await state.flush();
    expect(await redis.hget(`${prefix}:keypool:one:uses`, fp)).toBe('5');
    expect((await pool.status())[0]).toMatchObject({ uses: 5 });
    // Another process (another state object) reads what was written, and adds its own.
    const other = new RedisKeyPoolState(redis, prefix);
    await other.recordUse('one', fp);
    expect((await other.uses('one', [fp])).get(fp)).toBe(6);
    await other.flush();
    await state.flush(); // nothing pending: writes nothing
    expect(await redis.hget(`${prefix}:keypool:one:uses`, fp)).toBe('6');
  });

  it('writes on its own a second after a use, and least_used picks by the counts of every process', async () => {
    const state = new RedisKeyPoolState(redis, prefix);
    const pool = new KeyPool({ label: 'two', keys: ['sk-a', 'sk-b'], strategy: 'least_used', state });
    const [a, b] = pool.fingerprints;
    // Another process used key a three times already.
    await redis.hset(`${prefix}:keypool:two:uses`, a, 3);
    expect((await pool.acquire(new Set()))?.fingerprint).toBe(b);
    expect((await pool.acquire(new Set()))?.fingerprint).toBe(b);
    expect((await pool.acquire(new Set()))?.fingerprint).toBe(b);
    // Three each now (two pending here): a tie goes to the first key.
    expect((await pool.acquire(new Set()))?.fingerprint).toBe(a);
    await expect.poll(() => redis.hmget(`${prefix}:keypool:two:uses`, a, b), { timeout: 10_000 }).toEqual(['4', '3']);
  });

  it('drops a write Redis refuses with a warning, and the turn goes on', async () => {
    const warnings: string[] = [];
    const log = { warn: (_o: unknown, msg: string) => void warnings.push(msg) } as never;
    const broken = redis.duplicate();
    await broken.quit();
    const state = new RedisKeyPoolState(broken, prefix, log);
    await state.recordUse('three', 'sha256:00000000');
    await state.flush();
    expect(warnings).toEqual(['key pool: could not count key uses in Redis; carrying on without']);
  });
});
