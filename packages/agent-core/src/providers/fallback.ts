/**
 * Fallback between providers, on two chains.
 *
 * The turn's chain (ProviderChain, with FallbackState): a fallback lasts one turn: every turn starts again from
 * the primary, unless the primary is cooling down after a 429. The cooldown state outlives turns, so the caller
 * keeps one FallbackState (the gateway keeps one per process) and passes it to every turn.
 *
 * The side tasks' chain (`createFallbackProvider`, at the end): side tasks (compression summaries, session_search
 * summaries, the memory flush, titles, image descriptions) run on an auxiliary model with a fallback chain of its
 * own. That chain is itself a Provider, so every side task keeps taking "a provider": each call goes to the first
 * model, and any failure but a cancellation — a 402 from a spent account, a provider outage, a model the endpoint
 * does not serve — hands the same request to the next one. There is no retry with backoff there: a side task is
 * best effort and each caller has its own way out (an excerpt summary, a skipped flush, a declined image), so a
 * chain that has tried every model once has done its part.
 */
import { classifyError } from './errors.js';
import type { CompletionRequest, CompletionResult, Provider, ProviderError } from './types.js';

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

export interface SideFallback {
  from: Provider;
  to: Provider;
  error: ProviderError;
}

export interface FallbackProviderOptions {
  /** Told each time a model failed and the next one takes the request (for a log line). */
  onFallback?: (event: SideFallback) => void;
}

/** The providers in order, each model once (the first occurrence wins). */
export function uniqueProviders(providers: readonly Provider[]): Provider[] {
  const seen = new Set<string>();
  return providers.filter((p) => {
    const label = providerLabel(p);
    if (seen.has(label)) return false;
    seen.add(label);
    return true;
  });
}

/**
 * One Provider over several: name, model, API mode and vision are the first one's; each result names the model
 * that answered (`answeredBy`). A chain of one is that provider itself. Throws for an empty list.
 */
export function createFallbackProvider(providers: readonly Provider[], opts: FallbackProviderOptions = {}): Provider {
  const chain = uniqueProviders(providers);
  const first = chain[0];
  if (!first) throw new Error('a provider chain needs at least one provider');
  if (chain.length === 1) return first;
  return {
    name: first.name,
    model: first.model,
    apiMode: first.apiMode,
    ...(first.vision === undefined ? {} : { vision: first.vision }),
    complete: (req) => completeAlong(chain, req, opts),
  };
}

async function completeAlong(chain: readonly Provider[], req: CompletionRequest, opts: FallbackProviderOptions): Promise<CompletionResult> {
  for (const [i, provider] of chain.entries()) {
    try {
      const result = await provider.complete(req);
      // Who answered, for the cost and usage labels (the chain is named after its first model): the innermost
      // chain's answer wins when chains are nested.
      return result.answeredBy ? result : { ...result, answeredBy: { name: provider.name, model: provider.model } };
    } catch (raw) {
      const err = classifyError(raw);
      const next = chain[i + 1];
      // A cancelled request is the caller's decision, not the model's failure: nobody else should answer it.
      if (!next || err.kind === 'aborted' || req.signal.aborted) throw err;
      opts.onFallback?.({ from: provider, to: next, error: err });
    }
  }
  throw new Error('a fallback chain needs at least one provider');
}
