/**
 * Key-pool state in Redis, so every worker and ingress process skips a key another one found spent. A cooldown
 * is a key with a TTL (Redis expires it: no clock skew between hosts), use counts a hash, the round-robin
 * cursor a counter. Only key fingerprints appear in Redis key names and values, never the keys.
 *
 * Redis trouble must not fail a turn over bookkeeping: reads then see no cooldowns (every key tried, as
 * without a pool) and writes are dropped, each with one warning.
 */
import type { KeyCooling, KeyPoolState } from '@herald/agent-core';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

export class RedisKeyPoolState implements KeyPoolState {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log?: Logger,
  ) {}

  private key(pool: string, ...rest: string[]): string {
    return [this.prefix, 'keypool', pool, ...rest].join(':');
  }

  async cooling(pool: string, fingerprints: readonly string[]): Promise<Map<string, KeyCooling>> {
    const out = new Map<string, KeyCooling>();
    if (fingerprints.length === 0) return out;
    const batch = this.redis.multi();
    for (const fp of fingerprints) batch.pttl(this.key(pool, 'cool', fp)).get(this.key(pool, 'cool', fp));
    const replies = await this.guard(() => batch.exec(), null, 'read key cooldowns');
    if (!replies) return out;
    fingerprints.forEach((fp, i) => {
      const ttl = replies[i * 2]?.[1];
      const reason = replies[i * 2 + 1]?.[1];
      if (typeof ttl === 'number' && ttl > 0) out.set(fp, { remainingMs: ttl, reason: typeof reason === 'string' ? reason : 'cooling' });
    });
    return out;
  }

  async cool(pool: string, fingerprint: string, ms: number, reason: string): Promise<void> {
    await this.guard(() => this.redis.set(this.key(pool, 'cool', fingerprint), reason, 'PX', Math.max(1, Math.round(ms))), null, 'cool a key');
  }

  async uses(pool: string, fingerprints: readonly string[]): Promise<Map<string, number>> {
    if (fingerprints.length === 0) return new Map();
    const counts = await this.guard(() => this.redis.hmget(this.key(pool, 'uses'), ...fingerprints), [] as (string | null)[], 'read key use counts');
    return new Map(fingerprints.map((fp, i) => [fp, Number(counts[i] ?? 0)]));
  }

  async recordUse(pool: string, fingerprint: string): Promise<void> {
    await this.guard(() => this.redis.hincrby(this.key(pool, 'uses'), fingerprint, 1), 0, 'count a key use');
  }

  async nextTurn(pool: string): Promise<number> {
    return (await this.guard(() => this.redis.incr(this.key(pool, 'turn')), 1, 'advance the round-robin cursor')) - 1;
  }

  private async guard<T>(op: () => Promise<T>, fallback: T, what: string): Promise<T> {
    try {
      return await op();
    } catch (err) {
      this.log?.warn({ err: err instanceof Error ? err.message : String(err) }, `key pool: could not ${what} in Redis; carrying on without`);
      return fallback;
    }
  }
}
