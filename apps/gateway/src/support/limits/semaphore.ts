/**
 * A counting semaphore in Redis shared by every worker: at most `limit` holders at once, each holding a lease that
 * expires unless renewed (a killed worker's slot comes back after `leaseMs`). A caller over the limit waits its
 * turn (polling with a growing pause) instead of failing; its AbortSignal ends the wait. Used for per-profile
 * concurrent-turn limits and the global LLM concurrency cap.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Provider } from '@herald/agent-core';

const DEFAULT_LEASE_MS = 60_000;
const FIRST_PAUSE_MS = 25;
const MAX_PAUSE_MS = 500;

/** Drops expired leases; takes a slot when one is free. Time comes from Redis, so hosts' clocks do not matter. */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
  return 1
end
return 0`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[2])`;

export interface Slot {
  release(): Promise<void>;
}

export class RedisSemaphore {
  private readonly leaseMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly limit: number,
    opts: { leaseMs?: number } = {},
  ) {
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** Waits for a free slot; `onWait` is called while waiting (so a watchdog sees the turn is alive). */
  async acquire(signal?: AbortSignal, onWait?: () => void): Promise<Slot> {
    const token = randomUUID();
    let pause = FIRST_PAUSE_MS;
    while (!(await this.tryTake(token))) {
      signal?.throwIfAborted();
      onWait?.();
      await sleep(pause, signal);
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
    const renew = setInterval(
      () => {
        this.redis.eval(RENEW, 1, this.key, this.leaseMs, token).catch(() => undefined);
      },
      Math.max(Math.floor(this.leaseMs / 3), 50),
    );
    renew.unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        await this.redis.zrem(this.key, token).catch(() => undefined);
      },
    };
  }

  /** Holders right now (expired leases not counted). */
  async holders(): Promise<number> {
    return this.redis.zcount(this.key, Date.now(), '+inf');
  }

  private async tryTake(token: string): Promise<boolean> {
    return (await this.redis.eval(ACQUIRE, 1, this.key, this.limit, this.leaseMs, token)) === 1;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The LLM cap around a provider: each call takes a slot of the semaphore for as long as it runs. The semaphore is
 * shared by all providers of a process (and, through Redis, by every worker).
 */
export function limitProvider(provider: Provider, sem: RedisSemaphore): Provider {
  return {
    name: provider.name,
    model: provider.model,
    apiMode: provider.apiMode,
    ...(provider.vision !== undefined && { vision: provider.vision }),
    complete: async (req) => {
      const slot = await sem.acquire(req.signal);
      try {
        return await provider.complete(req);
      } finally {
        await slot.release();
      }
    },
  };
}
