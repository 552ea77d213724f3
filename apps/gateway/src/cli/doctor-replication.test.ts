/**
 * The doctor's Sentinel lines, and the connection target every client is built from, against a real primary, a
 * replica and three Sentinels (throw-away redis-server processes).
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelSet, type SentinelSet } from '../../../../test/helpers/sentinel-set.js';
import { ConfigError, loadConfig } from '../support/config/load.js';
import { connectRedis, describeRedisTarget, redisTarget } from '../support/redis.js';
import { replicationLines } from './doctor-replication.js';

let set: SentinelSet;
let primary: Redis;
const config = (extra: Record<string, string> = {}) => loadConfig({ env: { ...set.env, ...extra }, file: null });

beforeAll(async () => {
  set = await startSentinelSet();
  primary = await connectRedis(redisTarget(config()));
}, 60_000);
afterAll(async () => {
  primary?.disconnect();
  await set?.close();
});

describe('Redis through Sentinel', () => {
  it('REDIS_SENTINELS: the client asks the Sentinels and lands on the primary, whatever host REDIS_URL names', async () => {
    expect(Number((await primary.info('server')).match(/tcp_port:(\d+)/)?.[1])).toBe(await set.primaryPort());
    expect((await primary.info('replication')).match(/role:(\w+)/)?.[1]).toBe('master');
    expect(describeRedisTarget(redisTarget(config()))).toBe(`Sentinels ${set.env.REDIS_SENTINELS} (primary group herald-test)`);
  });

  it('a bad Sentinel address stops start-up naming the variable', () => {
    expect(() => config({ REDIS_SENTINELS: '127.0.0.1' })).toThrow(ConfigError);
    expect(() => config({ REDIS_SENTINELS: '127.0.0.1' })).toThrow(/REDIS_SENTINELS.*host:port/);
  });

  it('doctor: each Sentinel sees the primary, one replica and three Sentinels, with a reachable quorum', async () => {
    const lines = await replicationLines(primary, config());
    const sentinels = lines.filter((l) => l.name.startsWith('sentinel '));
    expect(sentinels).toHaveLength(3);
    for (const l of sentinels) {
      expect(l.status).toBe('ok');
      expect(l.detail).toBe(`primary 127.0.0.1:${await set.primaryPort()} (master), quorum 2, 1 replica(s), 3 Sentinel(s); quorum reachable`);
    }
  });

  it('doctor: min-replicas-to-write 0 is a warning; more WAIT replicas than connected ones fails; set right it passes', async () => {
    await primary.config('SET', 'min-replicas-to-write', '0');
    const replicas = async (extra: Record<string, string> = {}) => (await replicationLines(primary, config(extra))).find((l) => l.name === 'redis replicas');
    expect(await replicas()).toMatchObject({ status: 'warn', detail: expect.stringContaining('set min-replicas-to-write 1') });
    expect(await replicas({ HERALD_REDIS_WAIT_REPLICAS: '2' })).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('HERALD_REDIS_WAIT_REPLICAS=2: no message can be acknowledged until 2 replicas are connected'),
    });
    await primary.config('SET', 'min-replicas-to-write', '1');
    expect(await replicas({ HERALD_REDIS_WAIT_REPLICAS: '1' })).toEqual({
      name: 'redis replicas',
      status: 'ok',
      detail: 'role master, 1 connected replica, min-replicas-to-write 1',
    });
    await primary.config('SET', 'min-replicas-to-write', '0');
  });

  it('doctor: an unreachable Sentinel fails its line; without Sentinels or WAIT there are no replication lines', async () => {
    const lines = await replicationLines(primary, config({ REDIS_SENTINELS: `${set.env.REDIS_SENTINELS},127.0.0.1:1` }));
    expect(lines.find((l) => l.name === 'sentinel 127.0.0.1:1')).toMatchObject({ status: 'fail', detail: expect.stringContaining('ECONNREFUSED') });
    expect(await replicationLines(primary, loadConfig({ env: {}, file: null }))).toEqual([]);
  });
});
