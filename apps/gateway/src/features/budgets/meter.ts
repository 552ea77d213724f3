/**
 * Cost per LLM call: a turn's providers wrapped so each call's usage is priced with the model that answered it
 * (a fallback model has its own price), summed for the session's `estimated_cost_usd` and the budgets, and
 * reported call by call (metrics: spend and tokens per profile and model). Calls made without a provider (reading a
 * turn's files: transcriptions, image descriptions; the voice reply) are added the same way.
 */
import { addUsageInto, emptyUsage, providerLabel, type Provider, type Usage } from '@herald/agent-core';
import type { PriceTable } from './prices.js';

/** A model call made outside a metered provider (a transcription, an image description), to be priced and counted. */
export interface ModelCall {
  /** The provider and model that answered (a side-task chain's fallback model when it took the request). */
  by: { name: string; model: string };
  usage: Usage;
  /** Audio billed by the minute (whisper-1 reports seconds, no tokens). */
  audioSeconds?: number;
  /** Text read out, billed by the character (text-to-speech reports no usage). */
  characters?: number;
}

export interface CallSpend {
  /** `provider:model` of the provider that answered (a chain's fallback model when it took the request). */
  model: string;
  usage: Usage;
  costUsd: number;
}

export class SpendMeter {
  readonly usage: Usage = emptyUsage();
  costUsd = 0;
  /** Calls that answered (priced here). */
  calls = 0;

  constructor(
    private readonly prices: PriceTable,
    private readonly onCall: (call: CallSpend) => void = () => undefined,
  ) {}

  /** The same providers, each call priced and counted here. */
  wrap<T extends { primary: Provider; fallbacks: Provider[] }>(providers: T): T {
    return { ...providers, primary: this.provider(providers.primary), fallbacks: providers.fallbacks.map((p) => this.provider(p)) };
  }

  provider(p: Provider): Provider {
    return {
      name: p.name,
      model: p.model,
      apiMode: p.apiMode,
      ...(p.vision !== undefined && { vision: p.vision }),
      complete: async (req) => {
        const res = await p.complete(req);
        // A side-task chain says which of its models answered: that one's label and price (fallback.ts `createFallbackProvider`).
        this.add({ by: res.answeredBy ?? p, usage: res.usage });
        return res;
      },
    };
  }

  /** One answered call, priced with the model that answered it, counted and reported. */
  add(call: ModelCall): void {
    const { by, usage } = call;
    const costUsd = this.prices.costOf(by.model, usage, call);
    this.calls++;
    addUsageInto(this.usage, usage);
    this.costUsd += costUsd;
    this.onCall({ model: providerLabel(by), usage, costUsd });
  }
}

/** How calls are priced and where each one is reported (metrics), for spend outside a turn's own meter. */
export interface SpendPricing {
  readonly prices: PriceTable;
  onCall(profile: string, call: CallSpend): void;
}

/** A fresh meter for one profile's calls. */
export function meterFor(pricing: SpendPricing, profile: string): SpendMeter {
  return new SpendMeter(pricing.prices, (call) => pricing.onCall(profile, call));
}
