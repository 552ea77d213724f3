/**
 * What a turn obeys beyond its own session: the price table (cost per call), the budgets (refuse when used up,
 * tell at 80 %), the profile's concurrent-turn limit and the global LLM concurrency cap (both wait, never fail),
 * and where each call's spend is reported (metrics). Built once per worker process in app.ts.
 */
import type { Redis } from 'ioredis';
import type { Provider } from '@herald/agent-core';
import type { HeraldConfig } from '../config/load.js';
import type { BudgetGuard } from '../budgets/guard.js';
import type { CallSpend } from '../budgets/meter.js';
import { PriceTable } from '../budgets/prices.js';
import { RedisSemaphore, limitProvider } from '../limits/semaphore.js';
import type { ProfileTable } from '../profiles/table.js';

export interface TeamControls {
  prices: PriceTable;
  budgets: BudgetGuard;
  /** The profile's concurrent-turn semaphore; null when it has no limit. */
  turnSlots(profile: string): RedisSemaphore | null;
  /** The providers under the global LLM cap (as they are without one). */
  capped<T extends { primary: Provider; fallbacks: Provider[] }>(providers: T): T;
  /** Told of every LLM call's spend. */
  onCall(profile: string, call: CallSpend): void;
}

export interface TeamControlsDeps {
  config: Pick<HeraldConfig, 'prices' | 'llmConcurrency' | 'redisPrefix'>;
  budgets: BudgetGuard;
  redis: Redis;
  profiles: ProfileTable;
  onCall?: (profile: string, call: CallSpend) => void;
}

export function createTeamControls(deps: TeamControlsDeps): TeamControls {
  const { config, redis } = deps;
  const slots = new Map<string, RedisSemaphore>();
  for (const p of deps.profiles.list()) {
    if (p.maxConcurrentTurns !== undefined) slots.set(p.name, new RedisSemaphore(redis, `${config.redisPrefix}:slots:turns:${p.name}`, p.maxConcurrentTurns));
  }
  const llm = config.llmConcurrency > 0 ? new RedisSemaphore(redis, `${config.redisPrefix}:slots:llm`, config.llmConcurrency) : null;
  return {
    prices: new PriceTable(config.prices),
    budgets: deps.budgets,
    turnSlots: (profile) => slots.get(profile) ?? null,
    capped: (providers) => (llm ? { ...providers, primary: limitProvider(providers.primary, llm), fallbacks: providers.fallbacks.map((p) => limitProvider(p, llm)) } : providers),
    onCall: deps.onCall ?? (() => undefined),
  };
}
