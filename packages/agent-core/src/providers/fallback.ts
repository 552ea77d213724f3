/**
 * Fallback between providers. A fallback lasts one turn: every turn starts again from the primary, unless the
 * primary is cooling down after a 429. The cooldown state outlives turns, so the caller keeps one FallbackState
 * (the gateway keeps one per process) and passes it to every turn.
 */
import type { Provider } from './types.js';

export const RATE_LIMIT_COOLDOWN_MS = 60_000;
export const MAX_RATE_LIMIT_COOLDOWN_MS = 4 * 60 * 60 * 1000;

interface Cooldown {
  until: number;
  /** 429s in a row without a success in between; each one doubles the next cooldown. */
  strikes: number;
}

export interface FallbackStateOptions {
  /** Injectable clock (ms), so tests can step past a cooldown. */
  now?: () => number;
  baseCooldownMs?: number;
  maxCooldownMs?: number;
}

/** Providers are told apart by `provider:model`, the form HERALD_MODEL and HERALD_FALLBACK_MODELS use. */
export function providerLabel(provider: Pick<Provider, 'model'> & { name: string }): string {
  return `${provider.name}:${provider.model}`;
}

export class FallbackState {
  private readonly cooldowns = new Map<string, Cooldown>();
  private readonly now: () => number;
  private readonly baseCooldownMs: number;
  private readonly maxCooldownMs: number;

  constructor(opts: FallbackStateOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.baseCooldownMs = opts.baseCooldownMs ?? RATE_LIMIT_COOLDOWN_MS;
    this.maxCooldownMs = opts.maxCooldownMs ?? MAX_RATE_LIMIT_COOLDOWN_MS;
  }

  /** Starts (or lengthens) the provider's cooldown; a longer Retry-After from the server wins. */
  recordRateLimit(provider: Provider, retryAfterMs?: number): void {
    const key = providerLabel(provider);
    const strikes = (this.cooldowns.get(key)?.strikes ?? 0) + 1;
    const doubled = Math.min(this.maxCooldownMs, this.baseCooldownMs * 2 ** (strikes - 1));
    const length = Math.min(this.maxCooldownMs, Math.max(doubled, retryAfterMs ?? 0));
    this.cooldowns.set(key, { until: this.now() + length, strikes });
  }

  recordSuccess(provider: Provider): void {
    this.cooldowns.delete(providerLabel(provider));
  }

  /** Milliseconds until the provider may be tried again at the start of a turn; 0 when it may now. */
  cooldownRemainingMs(provider: Provider): number {
    const cooldown = this.cooldowns.get(providerLabel(provider));
    return cooldown ? Math.max(0, cooldown.until - this.now()) : 0;
  }
}

/** The providers of one turn, in order, and which one the turn is on. */
export class ProviderChain {
  private readonly providers: readonly Provider[];
  private readonly state: FallbackState;
  private index: number;
  /** Providers passed over at the start of the turn because they were cooling down. */
  readonly skippedAtStart: { provider: Provider; remainingMs: number }[] = [];

  constructor(providers: readonly Provider[], state: FallbackState) {
    if (providers.length === 0) throw new Error('a turn needs at least one provider');
    this.providers = providers;
    this.state = state;
    this.index = this.nextUsable(-1);
    for (const provider of providers.slice(0, this.index)) {
      this.skippedAtStart.push({ provider, remainingMs: state.cooldownRemainingMs(provider) });
    }
  }

  get current(): Provider {
    return this.providers[this.index];
  }

  get hasNext(): boolean {
    return this.index < this.providers.length - 1;
  }

  /** Moves to the next provider for the rest of the turn; undefined when none is left. */
  advance(): Provider | undefined {
    if (!this.hasNext) return undefined;
    this.index = this.nextUsable(this.index);
    return this.current;
  }

  /**
   * The first provider after `from` that is not cooling down. When all of them are, the one that is free
   * soonest: trying a provider that may still be limited beats failing the turn outright.
   */
  private nextUsable(from: number): number {
    let soonest = from + 1;
    for (let i = from + 1; i < this.providers.length; i++) {
      const remaining = this.state.cooldownRemainingMs(this.providers[i]);
      if (remaining === 0) return i;
      if (remaining < this.state.cooldownRemainingMs(this.providers[soonest])) soonest = i;
    }
    return soonest;
  }
}
