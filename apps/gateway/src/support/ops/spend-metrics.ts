/**
 * Each LLM call's spend into the metrics: USD and tokens per agent profile and model, and the running prompt-cache
 * hit ratio (cache reads over all prompt tokens) per profile and model.
 */
import type { CallSpend } from '../../features/budgets/meter.js';
import type { HeraldMetrics } from './metrics.js';

export function spendMetrics(metrics: HeraldMetrics): (profile: string, call: CallSpend) => void {
  const prompt = new Map<string, { read: number; all: number }>();
  return (profile, { model, usage, costUsd }) => {
    const labels = { profile, model };
    if (costUsd > 0) metrics.spendUsd.inc(labels, costUsd);
    const kinds = [
      ['input', usage.input],
      ['output', usage.output],
      ['cache_read', usage.cacheRead],
      ['cache_write', usage.cacheWrite],
    ] as const;
    for (const [kind, n] of kinds) if (n > 0) metrics.profileTokens.inc({ ...labels, kind }, n);
    const key = `${profile}\u0000${model}`;
    const t = prompt.get(key) ?? { read: 0, all: 0 };
    t.read += usage.cacheRead;
    t.all += usage.input + usage.cacheRead + usage.cacheWrite;
    prompt.set(key, t);
    if (t.all > 0) metrics.cacheHitRatio.set(labels, t.read / t.all);
  };
}
