/**
 * What a turn obeys beyond its own session: the price table (cost per call), the budgets (refuse when used up,
 * tell at 80 %), the profile's concurrent-turn limit and the global LLM concurrency cap (both wait, never fail),
 * and where each call's spend is reported (metrics). Built once per worker process (roles/turn-runner.ts). And the
 * third concurrency limit a turn waits for, the prep gate (PrepGate, below): how many turns of the process prepare
 * their first model request at once.
 */
import type { Redis } from 'ioredis';
import type { Provider } from '@herald/agent-core';
import type { HeraldConfig } from '../support/config/load.js';
import type { BudgetGuard } from '../features/budgets/guard.js';
import type { SpendPricing } from '../features/budgets/meter.js';
import { RedisSemaphore, limitProvider } from '../support/limits/semaphore.js';
import type { ProfileTable } from '../features/profiles/table.js';

/** `prices` and `onCall` (where every LLM call's spend is reported): the process's one SpendPricing. */
export interface TeamControls extends SpendPricing {
  budgets: BudgetGuard;
  /** The profile's concurrent-turn semaphore; null when it has no limit. */
  turnSlots(profile: string): RedisSemaphore | null;
  /** The providers under the global LLM cap (as they are without one). */
  capped<T extends { primary: Provider; fallbacks: Provider[] }>(providers: T): T;
}

export interface TeamControlsDeps {
  config: Pick<HeraldConfig, 'llmConcurrency' | 'redisPrefix'>;
  budgets: BudgetGuard;
  /** The conversation services' pricing (features/sessions/services.ts): the same table and report as calls outside turns. */
  pricing: SpendPricing;
  redis: Redis;
  profiles: ProfileTable;
}

export function createTeamControls(deps: TeamControlsDeps): TeamControls {
  const { config, redis } = deps;
  const slots = new Map<string, RedisSemaphore>();
  for (const p of deps.profiles.list()) {
    if (p.maxConcurrentTurns !== undefined) slots.set(p.name, new RedisSemaphore(redis, `${config.redisPrefix}:slots:turns:${p.name}`, p.maxConcurrentTurns));
  }
  const llm = config.llmConcurrency > 0 ? new RedisSemaphore(redis, `${config.redisPrefix}:slots:llm`, config.llmConcurrency) : null;
  return {
    prices: deps.pricing.prices,
    onCall: (profile, call) => deps.pricing.onCall(profile, call),
    budgets: deps.budgets,
    turnSlots: (profile) => slots.get(profile) ?? null,
    capped: (providers) =>
      llm ? { ...providers, primary: limitProvider(providers.primary, llm), fallbacks: providers.fallbacks.map((p) => limitProvider(p, llm)) } : providers,
  };
}

/**
 * The prep gate: at most `limit` turns at once between their start and their first model request.
 *
 * Why: a burst of turns started together moves through the steps before the model call (the session lock, the
 * store's writes and reads, Redis checks) in lockstep, each step batched for all of them. So no model request went
 * out until nearly every turn was prepared, then thousands went out at once, and the worker sat idle until the
 * answers came. With a gate the first turns reach the model early, and their waits overlap the others' preparing.
 * Under an even load fewer turns than the limit prepare at a time, and nobody waits.
 */

/** While turns wait in line, each hears `onWait` this often: waiting for a place is not a stalled turn. */
export const PREP_WAIT_TICK_MS = 1_000;

interface Waiter {
  admit: () => void;
  onWait?: () => void;
}

export class PrepGate {
  private inside = 0;
  private readonly waiting: Waiter[] = [];
  private ticker: NodeJS.Timeout | null = null;

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new Error(`the preparation limit must be at least 1 (got ${limit})`);
  }

  /** Turns preparing now, and turns waiting to. */
  get load(): { inside: number; waiting: number } {
    return { inside: this.inside, waiting: this.waiting.length };
  }

  /**
   * Waits for a place (FIFO) unless `signal` aborts first; `onWait` is called every PREP_WAIT_TICK_MS meanwhile (so
   * the turn's inactivity watchdog sees it alive). The release it gives is safe to call more than once.
   */
  async enter(signal: AbortSignal, onWait?: () => void): Promise<() => void> {
    signal.throwIfAborted();
    if (this.inside < this.limit && this.waiting.length === 0) this.inside++;
    else await this.queue(signal, onWait);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The place passes straight to the next turn in line.
      if (next) next.admit();
      else this.inside--;
      this.tickWhileWaiting();
    };
  }

  private queue(signal: AbortSignal, onWait: (() => void) | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        onWait,
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(waiter);
        if (i !== -1) this.waiting.splice(i, 1);
        this.tickWhileWaiting();
        reject(signal.reason);
      };
      this.waiting.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      this.tickWhileWaiting();
    });
  }

  /** One timer for the whole line, running only while someone waits. */
  private tickWhileWaiting(): void {
    if (this.waiting.length === 0) {
      if (this.ticker) clearInterval(this.ticker);
      this.ticker = null;
    } else if (!this.ticker) {
      this.ticker = setInterval(() => {
        for (const w of this.waiting) w.onWait?.();
      }, PREP_WAIT_TICK_MS);
      this.ticker.unref();
    }
  }
}
