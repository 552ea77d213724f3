/**
 * A turn's spend is recorded exactly once, whichever way the turn ends. A finished or user-interrupted turn records
 * it with its messages (in their transaction) and says so (`recorded()`); a turn that ends any other way — its lock
 * lost, the process shutting down, an exception after some LLM calls — gets what its calls cost so far recorded by
 * `settle()`: into the session's tokens, cost and API calls, and the budgets. A re-run of the turn (another worker
 * continuing after the saved tool work) spends and records its own calls, so nothing is counted twice. The memory
 * flush outside any turn (/new, resets) records its call the same way (turn/memory-flush.ts).
 */
import { emptyUsage, usageMinus, type SessionStore, type Usage } from '@herald/agent-core';
import type { TurnContext, TurnResult, TurnRunner } from '../../queue/turn-context.js';
import type { BudgetGuard, SpendSubject } from './guard.js';
import type { SpendMeter } from './meter.js';
import type { Logger } from '../../support/logger.js';

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
