/**
 * Each LLM call's spend into the metrics: USD and tokens per agent profile and model, and the running prompt-cache
 * hit ratio (cache reads over all prompt tokens) per profile and model.
 */
import type { CallSpend } from '../../features/budgets/meter.js';
import { TOKEN_KINDS, type HeraldMetrics } from './metrics.js';

export function spendMetrics(metrics: HeraldMetrics): (profile: string, call: CallSpend) => void {
  // By profile, then model: no key string joined for every call.
  const prompt = new Map<string, Map<string, { read: number; all: number }>>();
  return (profile, { model, usage, costUsd }) => {
    const labels = { profile, model };
    if (costUsd > 0) metrics.spendUsd.inc(labels, costUsd);
    for (const [count, kind] of TOKEN_KINDS) if (usage[count] > 0) metrics.profileTokens.inc({ ...labels, kind }, usage[count]);
    let byModel = prompt.get(profile);
    if (!byModel) prompt.set(profile, (byModel = new Map()));
    let t = byModel.get(model);
    if (!t) byModel.set(model, (t = { read: 0, all: 0 }));
    t.read += usage.cacheRead;
    t.all += usage.input + usage.cacheRead + usage.cacheWrite;
    if (t.all > 0) metrics.cacheHitRatio.set(labels, t.read / t.all);
  };
}
