/**
 * The one price table behind cost and budgets: HERALD_PRICES (USD per million tokens, with cache-read and
 * cache-write prices) over the built-in model table. A name matches a model the way the built-in table does: the
 * exact name, or a family name followed by a snapshot date, tag or version (`gpt-4.1-mini` prices
 * `gpt-4.1-mini-2025-04-14`), with an OpenRouter-style `vendor/` prefix ignored.
 */
import { estimateCostUsd, modelInfo, type ModelPrice, type Usage } from '@herald/agent-core';
import type { PricesSetting } from '../profiles/schema.js';

const BOUNDARY = /^[-:@.]/;

export class PriceTable {
  private readonly own: Array<[string, ModelPrice]>;

  constructor(prices: PricesSetting) {
    this.own = Object.entries(prices).map(([name, p]) => [
      bare(name),
      { input: p.input, output: p.output, ...(p.cache_read !== undefined && { cacheRead: p.cache_read }), ...(p.cache_write !== undefined && { cacheWrite: p.cache_write }) },
    ]);
  }

  /** The price of a model (`gpt-4.1-mini` or `openai:gpt-4.1-mini`); undefined when neither table knows it. */
  priceOf(model: string): ModelPrice | undefined {
    const name = bare(model);
    let best: [string, ModelPrice] | undefined;
    for (const entry of this.own) {
      const [key] = entry;
      const hit = name === key || (name.startsWith(key) && BOUNDARY.test(name.slice(key.length)));
      if (hit && (best === undefined || key.length > best[0].length)) best = entry;
    }
    return best?.[1] ?? modelInfo(name)?.price;
  }

  /** USD of one call; 0 for a model without a price (its tokens still count against token budgets). */
  costOf(model: string, usage: Usage): number {
    return estimateCostUsd(bare(model), usage, this.priceOf(model)) ?? 0;
  }
}

/** Without a `provider:` prefix (when the rest is not a tag) or a `vendor/` one, lower-case. */
function bare(model: string): string {
  let name = model.trim().toLowerCase();
  const colon = name.indexOf(':');
  // `openai:gpt-4.1` → `gpt-4.1`; `llama3.1:8b` (an Ollama tag) stays.
  if (colon > 0 && /^[a-z][a-z0-9_-]*$/.test(name.slice(0, colon)) && !/^\d/.test(name.slice(colon + 1))) name = name.slice(colon + 1);
  const slash = name.lastIndexOf('/');
  return slash >= 0 ? name.slice(slash + 1) : name;
}
