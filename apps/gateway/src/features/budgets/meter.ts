/**
 * Cost per LLM call: a turn's providers wrapped so each call's usage is priced with the model that answered it
 * (a fallback model has its own price), summed for the session's `estimated_cost_usd` and the budgets, and
 * reported call by call (metrics: spend and tokens per profile and model: spendMetrics). Calls made without a
 * provider (reading a turn's files: transcriptions, image descriptions; the voice reply) are added the same way.
 *
 * A turn's spend (TurnSpend, below) is recorded exactly once, whichever way the turn ends. A finished or
 * user-interrupted turn records it with its messages (in their transaction) and says so (`recorded()`); a turn that
 * ends any other way — its lock lost, the process shutting down, an exception after some LLM calls — gets what its
 * calls cost so far recorded by `settle()`: into the session's tokens, cost and API calls, and the budgets. A re-run
 * of the turn (another worker continuing after the saved tool work) spends and records its own calls, so nothing is
 * counted twice. The memory flush outside any turn (/new, resets) records its call the same way (turn/memory-flush.ts).
 */
import { addUsageInto, emptyUsage, providerLabel, usageMinus, type Provider, type SessionStore, type Usage } from '@herald/agent-core';
import type { TurnContext, TurnResult, TurnRunner } from '../../queue/turn-context.js';
import type { Logger } from '../../support/logger.js';
import { TOKEN_KINDS, type HeraldMetrics } from '../../support/ops/metrics.js';
import type { BudgetGuard, SpendSubject } from './guard.js';
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

/**
 * Each LLM call's spend into the metrics: USD and tokens per agent profile and model, and the running prompt-cache
 * hit ratio (cache reads over all prompt tokens) per profile and model.
 */
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

export interface TurnSpendDeps {
  store: SessionStore;
  budgets?: BudgetGuard;
}

export class TurnSpend {
  private open: { meter: SpendMeter; spender: SpendSubject; sessionId: () => string } | null = null;
  private done = false;
  /** Tokens already in a session's columns (the summary of a compression before the turn writes its own). */
  private counted: Usage = emptyUsage();

  constructor(private readonly deps: TurnSpendDeps) {}

  /** The turn's meter from now on; `sessionId` says which session its spend lands in (it moves on a compression). */
  track(meter: SpendMeter, spender: SpendSubject, sessionId: () => string): SpendMeter {
    this.open = { meter, spender, sessionId };
    return meter;
  }

  /** The tokens the meter has seen so far are in a session's columns already; their cost is not. */
  tokensCounted(): void {
    if (this.open) this.counted = { ...this.open.meter.usage };
  }

  /**
   * The tokens of every call the meter saw that are in no session's columns yet: the turn's own calls, its
   * subagents', its side tasks' (in-turn compressions and flushes, session_search summaries, reading its files).
   */
  uncountedTokens(): Usage {
    return usageMinus(this.open?.meter.usage ?? emptyUsage(), this.counted);
  }

  /**
   * What every call the meter saw cost: the price table's estimate, and what providers reported themselves
   * (sessions.actual_cost_usd; absent when none did).
   */
  costs(): { costUsd: number; actualCostUsd?: number } {
    const meter = this.open?.meter;
    if (!meter) return { costUsd: 0 };
    const reported = meter.usage.reportedCostUsd;
    return { costUsd: meter.costUsd, ...(reported !== undefined ? { actualCostUsd: reported } : {}) };
  }

  /** The caller recorded the spend with the turn's messages (its transaction committed). */
  recorded(): void {
    this.done = true;
  }

  /** Records what the turn's calls cost, unless that was done already; `apiCalls`: the loop's count when known. */
  async settle(apiCalls?: number): Promise<void> {
    if (this.done || !this.open) return;
    this.done = true;
    await this.deps.store.transaction(() => this.write(apiCalls));
  }

  /**
   * Writes what the calls cost inside the caller's transaction (a turn that answers without the model writes it
   * with its reply); the caller says `recorded()` once that committed.
   */
  async write(apiCalls?: number): Promise<void> {
    const open = this.open;
    if (!open) return;
    const { meter, spender } = open;
    const calls = apiCalls ?? meter.calls;
    if (calls === 0 && meter.costUsd === 0 && meter.usage.input + meter.usage.output === 0) return;
    const sessionId = open.sessionId();
    const { store, budgets } = this.deps;
    await store.addUsage(sessionId, { ...this.uncountedTokens(), ...this.costs(), apiCalls: calls });
    await budgets?.record(spender, meter.usage, meter.costUsd);
  }
}

/**
 * The spend policy (turn/pipeline.ts, innermost): settles `spend` when `run` ends without recording it — it threw,
 * or took a way out that writes no usage (files nobody could read after a compression) — the error, if any, going
 * on. A store that cannot take the record is logged: the turn's own outcome is what the caller must see.
 */
export async function settlingAfter<T>(spend: TurnSpend, log: Logger, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } finally {
    await spend.settle().catch((e: unknown) => log.warn({ err: e }, 'the spend of an unfinished turn could not be recorded'));
  }
}

/** Gives the runner a TurnSpend of its own, settled by settlingAfter. */
export function settlingSpend(deps: TurnSpendDeps, run: (ctx: TurnContext, spend: TurnSpend) => Promise<TurnResult | void>): TurnRunner {
  return (ctx) => {
    const spend = new TurnSpend(deps);
    return settlingAfter(spend, ctx.log, () => run(ctx, spend));
  };
}
