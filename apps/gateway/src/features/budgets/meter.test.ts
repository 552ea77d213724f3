/**
 * A turn's spend is recorded once whichever way the turn ends (features/budgets/meter.ts TurnSpend), on SQLite and PostgreSQL: a turn
 * that fails after a priced call, is taken over (lock lost) or shut down gets its calls into the session's tokens,
 * cost and API calls and into the budgets; a turn that recorded them with its messages is not counted again.
 */
import { describe, expect, it } from 'vitest';
import type { Provider, SessionStore } from '@herald/agent-core';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { SessionCounters } from '../sessions/counters.js';
import type { TurnContext } from '../../queue/turn-context.js';
import { BudgetGuard } from './guard.js';
import { settlingSpend, SpendMeter, TurnSpend } from './meter.js';
import { PriceTable } from './prices.js';
import { SpendStore } from './spend-store.js';

const M = 1_000_000;
const prices = new PriceTable({ 'my-model': { input: 2, output: 10 } });
const spender = { profile: 'default', platform: 'telegram', userId: '5' };
const silent = { warn: () => undefined } as unknown as TurnContext['log'];

/** A model whose every call answers with these tokens. */
const model = (input: number, output: number): Provider => ({
  name: 'openai',
  model: 'my-model',
  apiMode: 'chat_completions',
  complete: async () => ({
    message: { role: 'assistant', content: 'x' },
    finishReason: 'stop',
    usage: { input, output, cacheRead: 0, cacheWrite: 0 },
    model: 'my-model',
  }),
});
const ask = (p: Provider) => p.complete({ systemPrompt: '', messages: [], tools: [], signal: new AbortController().signal });

describe.each(STORE_BACKENDS)("a turn's spend on %s", (backend) => {
  const temp = useTempStores(backend);

  async function world(): Promise<{
    store: SessionStore;
    sessionId: string;
    counters: SessionCounters;
    budgets: BudgetGuard;
    spent: () => Promise<{ tokens: number; costUsd: number }>;
  }> {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:5', { source: 'telegram', userId: '5' });
    const spendStore = new SpendStore(store.sql);
    const budgets = new BudgetGuard(spendStore, { budgets: [], admins: [], timeZone: 'UTC' });
    const [user] = budgets.spendKeys(spender).filter((k) => k.scope === 'user:telegram:5');
    return { store, sessionId: session.id, counters: new SessionCounters(store), budgets, spent: () => spendStore.get(user.scope, user.period) };
  }

  it('settles an unrecorded turn once: session tokens, cost, API calls and budgets', async () => {
    const w = await world();
    const spend = new TurnSpend({ store: w.store, budgets: w.budgets });
    const meter = spend.track(new SpendMeter(prices), spender, () => w.sessionId);
    await ask(meter.provider(model(M, 0)));
    await ask(meter.provider(model(0, M)));
    await spend.settle();
    await spend.settle(); // a second settle (or one after the turn recorded) adds nothing
    const s = await w.store.getSession(w.sessionId);
    expect(s).toMatchObject({ inputTokens: M, outputTokens: M });
    expect(s!.estimatedCostUsd).toBeCloseTo(12, 10);
    expect(await w.counters.apiCalls(w.sessionId)).toBe(2);
    expect(await w.spent()).toMatchObject({ tokens: 2 * M, costUsd: 12 });
  });

  it('a turn that recorded its spend with its messages is not counted again', async () => {
    const w = await world();
    const spend = new TurnSpend({ store: w.store, budgets: w.budgets });
    const meter = spend.track(new SpendMeter(prices), spender, () => w.sessionId);
    await ask(meter.provider(model(M, 0)));
    spend.recorded();
    await spend.settle();
    expect(await w.store.getSession(w.sessionId)).toMatchObject({ inputTokens: 0, estimatedCostUsd: 0 });
    expect(await w.spent()).toMatchObject({ tokens: 0, costUsd: 0 });
  });

  it('a runner that throws after a priced call has it recorded, and its error goes on', async () => {
    const w = await world();
    const run = settlingSpend({ store: w.store, budgets: w.budgets }, async (_ctx, spend) => {
      const meter = spend.track(new SpendMeter(prices), spender, () => w.sessionId);
      // A compression before the turn wrote its summary's tokens (not its cost) into the session itself.
      await ask(meter.provider(model(1_000, 0)));
      spend.tokensCounted();
      await ask(meter.provider(model(M, 0)));
      throw new Error('the tool crashed');
    });
    await expect(run({ log: silent } as TurnContext)).rejects.toThrow('the tool crashed');
    const s = await w.store.getSession(w.sessionId);
    expect(s).toMatchObject({ inputTokens: M });
    expect(s!.estimatedCostUsd).toBeCloseTo(2 + 0.002, 10);
    expect(await w.counters.apiCalls(w.sessionId)).toBe(2);
    expect(await w.spent()).toMatchObject({ tokens: M + 1_000 });
  });

  it('a runner that returns without recording (a way out that writes no usage) is settled too; one that recorded is not', async () => {
    const w = await world();
    const deps = { store: w.store, budgets: w.budgets };
    await settlingSpend(deps, async (_ctx, spend) => {
      await ask(spend.track(new SpendMeter(prices), spender, () => w.sessionId).provider(model(M, 0)));
    })({ log: silent } as TurnContext);
    await settlingSpend(deps, async (_ctx, spend) => {
      await ask(spend.track(new SpendMeter(prices), spender, () => w.sessionId).provider(model(M, 0)));
      spend.recorded();
    })({ log: silent } as TurnContext);
    expect(await w.store.getSession(w.sessionId)).toMatchObject({ inputTokens: M });
    expect(await w.spent()).toMatchObject({ tokens: M, costUsd: 2 });
  });

  it('a turn that failed before any call records nothing', async () => {
    const w = await world();
    const run = settlingSpend({ store: w.store, budgets: w.budgets }, async () => {
      throw new Error('no model');
    });
    await expect(run({ log: silent } as TurnContext)).rejects.toThrow('no model');
    expect(await w.store.getSession(w.sessionId)).toMatchObject({ inputTokens: 0, estimatedCostUsd: 0 });
  });
});
