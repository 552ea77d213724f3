/**
 * Side tasks (compression summaries, session_search summaries, the memory flush, titles, image descriptions) run
 * on an auxiliary model with a fallback chain of its own. A chain is itself a Provider, so every side task keeps
 * taking "a provider": each call goes to the first model, and any failure but a cancellation — a 402 from a spent
 * account, a provider outage, a model the endpoint does not serve — hands the same request to the next one.
 *
 * There is no retry with backoff here: a side task is best effort and each caller has its own way out (an excerpt
 * summary, a skipped flush, a declined image), so a chain that has tried every model once has done its part.
 */
import { providerLabel } from './fallback.js';
import { classifyError } from './errors.js';
import type { CompletionRequest, CompletionResult, Provider } from './types.js';
import type { ProviderError } from './types.js';

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
