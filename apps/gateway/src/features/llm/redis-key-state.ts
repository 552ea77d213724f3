/**
 * Key-pool state in Redis, so every worker and ingress process skips a key another one found spent. A cooldown
 * is a key with a TTL (Redis expires it: no clock skew between hosts), use counts a hash, the round-robin
 * cursor a counter. Only key fingerprints appear in Redis key names and values, never the keys.
 *
 * Redis trouble must not fail a turn over bookkeeping: reads then see no cooldowns (every key tried, as
 * without a pool) and writes are dropped, each with one warning.
 *
 * Use counts are added up in the process and written once a second (one HINCRBY per key that was used), not one
 * command per LLM request: they are shown (/health/detailed, `herald doctor`) and compared by `least_used`, neither
 * of which needs them to the request. This process's counts not yet written are added to what it reads; stopping
 * writes them (`flush()`); a crash loses at most the last second's.
 */
import type { KeyCooling, KeyPoolState } from '@herald/agent-core';
import type { Redis } from 'ioredis';
import type { Logger } from '../../support/logger.js';

/** How long use counts gather in the process before they are written. */
const USE_FLUSH_MS = 1_000;

export class RedisKeyPoolState implements KeyPoolState {
  /** Uses not yet written, by hash key (pool) and key fingerprint. */
  private readonly pendingUses = new Map<string, Map<string, number>>();
  private flushTimer: NodeJS.Timeout | null = null;

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
    const hash = this.key(pool, 'uses');
    const counts = await this.guard(() => this.redis.hmget(hash, ...fingerprints), [] as (string | null)[], 'read key use counts');
    const pending = this.pendingUses.get(hash);
    return new Map(fingerprints.map((fp, i) => [fp, Number(counts[i] ?? 0) + (pending?.get(fp) ?? 0)]));
  }

  async recordUse(pool: string, fingerprint: string): Promise<void> {
    const hash = this.key(pool, 'uses');
    let pending = this.pendingUses.get(hash);
    if (!pending) this.pendingUses.set(hash, (pending = new Map()));
    pending.set(fingerprint, (pending.get(fingerprint) ?? 0) + 1);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush(), USE_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  /** Writes the use counts gathered so far (one round trip); the gateway calls it when it stops. */
  async flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.pendingUses.size === 0) return;
    const batch = this.redis.pipeline();
    for (const [hash, counts] of this.pendingUses) for (const [fp, n] of counts) batch.hincrby(hash, fp, n);
    this.pendingUses.clear();
    await this.guard(
      async () => {
        // A pipeline reports each command's error in its reply rather than rejecting.
        const failed = (await batch.exec())?.find(([err]) => err)?.[0];
        if (failed) throw failed;
      },
      undefined,
      'count key uses',
    );
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
