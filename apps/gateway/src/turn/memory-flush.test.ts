/**
 * The memory flush before a compression inside a turn goes through the turn's spend meter: the side-task model's
 * call is priced with the turn's own calls (features/budgets/meter.ts), not left out of the session's cost and the budgets.
 */
import { describe, expect, it } from 'vitest';
import type { Provider, Session } from '@herald/agent-core';
import { STORE_BACKENDS, useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import { PriceTable } from '../features/budgets/prices.js';
import { SpendMeter } from '../features/budgets/meter.js';
import type { ConversationServices } from '../features/sessions/services.js';
import type { Profile } from '../features/profiles/table.js';
import { flushBeforeLoopCompression, flushOutsideTurn } from './memory-flush.js';
import { offersMemory } from './tools.js';
import type { CallSpend } from '../features/budgets/meter.js';
import { BudgetGuard } from '../features/budgets/guard.js';
import { SpendStore } from '../features/budgets/spend-store.js';
import { SessionCounters } from '../features/sessions/counters.js';

const profile: Profile = {
  name: 'default',
  model: 'openai:gpt-4.1-mini',
  fallbackModels: [],
  systemPrompt: 'You are Herald.',
  toolsets: ['core'],
  busyInputMode: 'interrupt',
  memory: 'profile',
  maxIterations: 10,
  maxConcurrentTurns: undefined,
  review: { enabled: false, everyTurns: 5, apply: 'offer' },
  personality: undefined,
  contextFiles: [],
  skillsDir: undefined,
  skillManage: false,
  approvals: { tools: [], exempt: [] },
};

/** A side-task model that answers the flush with plain text (nothing saved) and reports token usage. */
function sideModel(calls: string[], model = 'gpt-4.1-mini'): Provider {
  return {
    name: 'openai',
    model,
    apiMode: 'chat_completions',
    complete: async () => {
      calls.push('side');
      return {
        message: { role: 'assistant', content: 'nothing to save' },
        finishReason: 'stop',
        usage: { input: 1_000, output: 10, cacheRead: 0, cacheWrite: 0 },
        model,
      };
    },
  };
}

describe.each(STORE_BACKENDS)('memory flush inside a turn on %s', (backend) => {
  const temp = useTempStores(backend);

  it('prices the side-task call with the turn (its meter wraps the side model)', async () => {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:7', { source: 'telegram', userId: '7', model: 'openai:gpt-4.1-mini' });
    const calls: string[] = [];
    const services = { profiles: { get: () => profile }, sideTasks: { forSession: () => sideModel(calls) } } as unknown as ConversationServices;
    const meter = new SpendMeter(new PriceTable({}));
    const turnModel = { ...sideModel([]), complete: () => Promise.reject(new Error('the turn model is not asked')) } as Provider;
    const flush = flushBeforeLoopCompression(store, services, session as Session, turnModel, new AbortController().signal, undefined, (p) => meter.provider(p));
    expect(flush).toBeDefined();
    await flush?.([
      { role: 'user', content: 'remember that I like tea' },
      { role: 'assistant', content: 'noted' },
    ]);
    expect(calls).toEqual(['side']);
    expect(meter.usage).toMatchObject({ input: 1_000, output: 10 });
    expect(meter.costUsd).toBeGreaterThan(0);
  });
});

describe.each(STORE_BACKENDS)('memory flush outside a turn (/new, resets) on %s', (backend) => {
  const temp = useTempStores(backend);

  it("prices the flush into the ended session, its person's budgets and the metrics", async () => {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:support:slack:dm:U7', {
      source: 'slack',
      userId: 'U7',
      profile: 'support',
      model: 'openai:my-model',
    });
    await store.appendMessages(session.id, [
      { role: 'user', content: 'remember that I like tea' },
      { role: 'assistant', content: 'noted' },
    ]);
    const calls: string[] = [];
    const reported: Array<[string, CallSpend]> = [];
    const counters = new SessionCounters(store);
    const budgets = new BudgetGuard(new SpendStore(store.sql), { budgets: [], admins: [], timeZone: 'UTC' });
    const services = {
      profiles: { get: () => ({ ...profile, name: 'support' }) },
      sideTasks: { forSession: () => sideModel(calls, 'my-model') },
      pricing: { prices: new PriceTable({ 'my-model': { input: 2, output: 100 } }), onCall: (p: string, c: CallSpend) => reported.push([p, c]) },
      counters,
      budgets,
    } as unknown as ConversationServices;
    const ended = await store.endSession(session.id, 'session_reset');

    await flushOutsideTurn(store, services, ended, 'reset');

    expect(calls).toEqual(['side']);
    const cost = (1_000 * 2 + 10 * 100) / 1_000_000;
    const after = await store.getSession(session.id);
    expect(after).toMatchObject({ inputTokens: 1_000, outputTokens: 10 });
    expect(after!.estimatedCostUsd).toBeCloseTo(cost, 12);
    expect(await counters.apiCalls(session.id)).toBe(1);
    const spender = { profile: 'support', platform: 'slack', userId: 'U7' };
    const spent = await Promise.all(budgets.spendKeys(spender).map((k) => new SpendStore(store.sql).get(k.scope, k.period)));
    for (const row of spent) {
      expect(row.tokens).toBe(1_010);
      expect(row.costUsd).toBeCloseTo(cost, 12);
    }
    expect(reported.map(([p, c]) => [p, c.model, c.usage.input])).toEqual([['support', 'openai:my-model', 1_000]]);
  });

  it('a flush with nothing to save from (no user message) costs nothing and records nothing', async () => {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:8', { source: 'telegram', userId: '8', model: 'openai:gpt-4.1-mini' });
    const calls: string[] = [];
    const services = {
      profiles: { get: () => profile },
      sideTasks: { forSession: () => sideModel(calls) },
      pricing: { prices: new PriceTable({}), onCall: () => undefined },
      counters: new SessionCounters(store),
      budgets: new BudgetGuard(new SpendStore(store.sql), { budgets: [], admins: [], timeZone: 'UTC' }),
    } as unknown as ConversationServices;
    await flushOutsideTurn(store, services, session as Session, 'reset');
    expect(calls).toEqual([]);
    expect(await store.getSession(session.id)).toMatchObject({ inputTokens: 0, estimatedCostUsd: 0 });
  });
});

describe('offersMemory', () => {
  it("answers from the toolsets' tool names, the gateway's own schedule toolset included, and refuses an unknown one", () => {
    expect(offersMemory(['core'])).toBe(true);
    expect(offersMemory(['full'])).toBe(true); // full includes core
    expect(offersMemory(['core', 'schedule'])).toBe(true);
    expect(offersMemory(['research'])).toBe(false);
    expect(offersMemory(['research', 'schedule'])).toBe(false);
    expect(offersMemory([])).toBe(false);
    expect(() => offersMemory(['nope'])).toThrow(/nope/);
  });
});
