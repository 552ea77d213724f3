/**
 * Credential pools: several API keys for one provider, handed out by a strategy (fill-first, round-robin,
 * least-used), with keys that the API refused cooled down for a while. The state (cooldowns, use counts, the
 * round-robin cursor) lives behind KeyPoolState, so the gateway can keep it in Redis and every worker skips a
 * key another worker found spent. Keys are never logged: only their fingerprint. `withPooledKey` runs one request
 * through the pool.
 */
import { createHash } from 'node:crypto';
import { abortableSleep } from './retry.js';
import { classifyError } from './errors.js';
import { ProviderError, type KeySource, type PooledKey } from './types.js';

export type KeyStrategy = 'fill_first' | 'round_robin' | 'least_used';
export const KEY_STRATEGIES: readonly KeyStrategy[] = ['fill_first', 'round_robin', 'least_used'];

/** How long a key rests after each kind of refusal. */
export interface KeyCooldowns {
  /** A 429 that a second try did not clear; the server's Retry-After wins when longer. */
  rateLimitMs: number;
  /** 401 / 403: revoked, mistyped or not allowed. */
  authMs: number;
  /** 402 and OpenAI's `insufficient_quota`: out of credit, which does not come back by itself soon. */
  billingMs: number;
}

export const DEFAULT_KEY_COOLDOWNS: KeyCooldowns = {
  rateLimitMs: 60_000,
  authMs: 10 * 60_000,
  billingMs: 24 * 60 * 60_000,
};

export interface KeyCooling {
  remainingMs: number;
  reason: string;
}

/** Shared pool state. In-process (MemoryKeyPoolState) for one process; the gateway keeps it in Redis. */
export interface KeyPoolState {
  cooling(pool: string, fingerprints: readonly string[]): Promise<Map<string, KeyCooling>>;
  cool(pool: string, fingerprint: string, ms: number, reason: string): Promise<void>;
  uses(pool: string, fingerprints: readonly string[]): Promise<Map<string, number>>;
  recordUse(pool: string, fingerprint: string): Promise<void>;
  /** A counter that grows by one per call, shared by every process: the round-robin cursor. */
  nextTurn(pool: string): Promise<number>;
}

export interface KeyStatus {
  fingerprint: string;
  state: 'ready' | 'cooling';
  uses: number;
  cooldownRemainingMs?: number;
  reason?: string;
}

export interface KeyPoolOptions {
  label: string;
  keys: readonly string[];
  strategy?: KeyStrategy;
  state?: KeyPoolState;
  cooldowns?: Partial<KeyCooldowns>;
}

/** `sha256:1a2b3c4d`: enough to tell keys apart in logs and on /health/detailed, useless to an attacker. */
export function keyFingerprint(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

export class KeyPool implements KeySource {
  readonly label: string;
  readonly strategy: KeyStrategy;
  private readonly keys: PooledKey[];
  private readonly state: KeyPoolState;
  private readonly cooldowns: KeyCooldowns;

  constructor(opts: KeyPoolOptions) {
    const unique = [...new Set(opts.keys.map((k) => k.trim()).filter(Boolean))];
    if (unique.length === 0) throw new Error(`key pool ${opts.label}: no keys`);
    this.label = opts.label;
    this.keys = unique.map((key) => ({ key, fingerprint: keyFingerprint(key) }));
    this.strategy = opts.strategy ?? 'fill_first';
    this.state = opts.state ?? new MemoryKeyPoolState();
    this.cooldowns = { ...DEFAULT_KEY_COOLDOWNS, ...opts.cooldowns };
  }

  get size(): number {
    return this.keys.length;
  }

  get fingerprints(): string[] {
    return this.keys.map((k) => k.fingerprint);
  }

  async acquire(tried: ReadonlySet<string>): Promise<PooledKey | undefined> {
    const untried = this.keys.filter((k) => !tried.has(k.fingerprint));
    if (untried.length === 0) return undefined;
    // A pool of one: its key is tried whatever its state (resting or not, every strategy picks it), so the
    // shared state need not be read on every request, and its use count (shown by status(), never used to pick)
    // need not hold up the request: it is counted in the background, a failure dropped like the state's own.
    if (this.keys.length === 1) {
      this.state.recordUse(this.label, untried[0].fingerprint).catch(() => {});
      return untried[0];
    }
    const cooling = await this.state.cooling(this.label, this.fingerprints);
    const ready = untried.filter((k) => !cooling.has(k.fingerprint));
    let pick: PooledKey | undefined;
    if (ready.length > 0) pick = await this.byStrategy(ready);
    else if (tried.size === 0) {
      // Every key is resting: the one free soonest is tried anyway; failing without asking helps nobody.
      pick = [...untried].sort((a, b) => remaining(cooling, a) - remaining(cooling, b))[0];
    }
    if (pick) await this.state.recordUse(this.label, pick.fingerprint);
    return pick;
  }

  async cool(key: PooledKey, err: ProviderError): Promise<void> {
    const { ms, reason } = this.cooldownFor(err);
    await this.state.cool(this.label, key.fingerprint, ms, reason);
  }

  /** Each key's state, in configured order, for /health/detailed and `herald doctor`. */
  async status(): Promise<KeyStatus[]> {
    const [cooling, uses] = await Promise.all([this.state.cooling(this.label, this.fingerprints), this.state.uses(this.label, this.fingerprints)]);
    return this.keys.map(({ fingerprint }) => {
      const c = cooling.get(fingerprint);
      const base = { fingerprint, uses: uses.get(fingerprint) ?? 0 };
      return c ? { ...base, state: 'cooling', cooldownRemainingMs: c.remainingMs, reason: c.reason } : { ...base, state: 'ready' };
    });
  }

  private async byStrategy(ready: PooledKey[]): Promise<PooledKey> {
    switch (this.strategy) {
      case 'fill_first':
        return ready[0];
      case 'round_robin': {
        const turn = await this.state.nextTurn(this.label);
        const readySet = new Set(ready);
        for (let i = 0; i < this.keys.length; i++) {
          const k = this.keys[(turn + i) % this.keys.length];
          if (readySet.has(k)) return k;
        }
        return ready[0];
      }
      case 'least_used': {
        const uses = await this.state.uses(
          this.label,
          ready.map((k) => k.fingerprint),
        );
        return ready.reduce((best, k) => ((uses.get(k.fingerprint) ?? 0) < (uses.get(best.fingerprint) ?? 0) ? k : best));
      }
    }
  }

  private cooldownFor(err: ProviderError): { ms: number; reason: string } {
    if (err.status === 402 || (err.kind === 'auth' && err.status === 429)) return { ms: this.cooldowns.billingMs, reason: `billing (${err.status})` };
    if (err.kind === 'auth') return { ms: this.cooldowns.authMs, reason: `refused (${err.status ?? 'auth'})` };
    return { ms: Math.max(this.cooldowns.rateLimitMs, err.retryAfterMs ?? 0), reason: `rate limited (${err.status ?? 429})` };
  }
}

function remaining(cooling: Map<string, KeyCooling>, k: PooledKey): number {
  return cooling.get(k.fingerprint)?.remainingMs ?? 0;
}

/** A pool of one: the single key a provider was configured with. Never cools (the loop's fallback handles it). */
export function singleKey(label: string, key: string): KeySource {
  const only: PooledKey = { key, fingerprint: keyFingerprint(key) };
  return {
    label,
    size: 1,
    acquire: async (tried) => (tried.has(only.fingerprint) ? undefined : only),
    cool: async () => undefined,
  };
}

/** Pool state for one process: cooldowns against the clock, counters in maps. */
export class MemoryKeyPoolState implements KeyPoolState {
  private readonly until = new Map<string, { at: number; reason: string }>();
  private readonly counts = new Map<string, number>();
  private readonly turns = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async cooling(pool: string, fingerprints: readonly string[]): Promise<Map<string, KeyCooling>> {
    const out = new Map<string, KeyCooling>();
    for (const fp of fingerprints) {
      const c = this.until.get(`${pool}/${fp}`);
      const remainingMs = c ? c.at - this.now() : 0;
      if (c && remainingMs > 0) out.set(fp, { remainingMs, reason: c.reason });
    }
    return out;
  }

  async cool(pool: string, fingerprint: string, ms: number, reason: string): Promise<void> {
    this.until.set(`${pool}/${fingerprint}`, { at: this.now() + ms, reason });
  }

  async uses(pool: string, fingerprints: readonly string[]): Promise<Map<string, number>> {
    return new Map(fingerprints.map((fp) => [fp, this.counts.get(`${pool}/${fp}`) ?? 0]));
  }

  async recordUse(pool: string, fingerprint: string): Promise<void> {
    const k = `${pool}/${fingerprint}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
  }

  async nextTurn(pool: string): Promise<number> {
    const n = this.turns.get(pool) ?? 0;
    this.turns.set(pool, n + 1);
    return n;
  }
}

/** Longest wait before the one same-key retry of a 429; a longer Retry-After rotates at once. */
const SAME_KEY_RETRY_MAX_WAIT_MS = 2_000;

/**
 * Runs one provider request with a key from the provider's pool, rotating inside the request: a 429 is tried
 * once more on the same key and then on the next key; a 401/402/403 cools the key down and moves on at once.
 * All of this happens inside one `provider.complete`, so rotation never spends the agent loop's retry budget;
 * only when no key is left does the loop see the error (and retry or fall back as usual).
 */
export async function withPooledKey<T>(source: KeySource, signal: AbortSignal, attempt: (key: PooledKey) => Promise<T>): Promise<T> {
  const tried = new Set<string>();
  let last: ProviderError | undefined;
  for (;;) {
    const key = await source.acquire(tried);
    if (!key) throw last ?? new ProviderError('auth', `${source.label}: no API key available`);
    tried.add(key.fingerprint);
    try {
      return await attempt(key);
    } catch (raw) {
      let err = classifyError(raw);
      // With one key there is nowhere to rotate to: the loop's own retry and fallback take it from here.
      if (source.size === 1 || signal.aborted) throw err;
      if (err.kind === 'rate_limit') {
        const wait = err.retryAfterMs ?? 0;
        if (wait > SAME_KEY_RETRY_MAX_WAIT_MS) {
          await source.cool(key, err);
          last = err;
          continue;
        }
        await abortableSleep(wait, signal);
        try {
          return await attempt(key);
        } catch (again) {
          err = classifyError(again);
          if (signal.aborted) throw err;
        }
      }
      if (!isKeyRefusal(err)) throw err;
      await source.cool(key, err);
      last = err;
    }
  }
}

/** The key itself is the problem: rate limited, refused, or out of credit. */
function isKeyRefusal(err: ProviderError): boolean {
  return err.kind === 'rate_limit' || (err.kind === 'auth' && (err.status === 401 || err.status === 402 || err.status === 403 || err.status === 429));
}
