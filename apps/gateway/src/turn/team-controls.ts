/**
 * What a turn obeys beyond its own session: the price table (cost per call), the budgets (refuse when used up,
 * tell at 80 %), the profile's concurrent-turn limit and the global LLM concurrency cap (both wait, never fail),
 * and where each call's spend is reported (metrics). Built once per worker process (roles/turn-runner.ts).
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
