/**
 * The memory flush before a compression inside a turn goes through the turn's spend meter: the side-task model's
 * call is priced with the turn's own calls (budgets/meter.ts), not left out of the session's cost and the budgets.
 */
import { describe, expect, it } from 'vitest';
import type { Provider, Session } from '@herald/agent-core';
import { STORE_BACKENDS, useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import { PriceTable } from '../budgets/prices.js';
import { SpendMeter } from '../budgets/meter.js';
import type { ConversationServices } from '../sessions/services.js';
import type { Profile } from '../profiles/table.js';
import { flushBeforeLoopCompression } from './memory-flush.js';
import { offersMemory } from './tools.js';

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
};

/** A side-task model that answers the flush with plain text (nothing saved) and reports token usage. */
function sideModel(calls: string[]): Provider {
  return {
    name: 'openai',
    model: 'gpt-4.1-mini',
    apiMode: 'chat_completions',
    complete: async () => {
      calls.push('side');
      return { message: { role: 'assistant', content: 'nothing to save' }, finishReason: 'stop', usage: { input: 1_000, output: 10, cacheRead: 0, cacheWrite: 0 }, model: 'gpt-4.1-mini' };
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
    await flush?.([{ role: 'user', content: 'remember that I like tea' }, { role: 'assistant', content: 'noted' }]);
    expect(calls).toEqual(['side']);
    expect(meter.usage).toMatchObject({ input: 1_000, output: 10 });
    expect(meter.costUsd).toBeGreaterThan(0);
  });
});

describe('offersMemory', () => {
  it('answers from the toolsets\' tool names, the gateway\'s own schedule toolset included, and refuses an unknown one', () => {
    expect(offersMemory(['core'])).toBe(true);
    expect(offersMemory(['full'])).toBe(true); // full includes core
    expect(offersMemory(['core', 'schedule'])).toBe(true);
    expect(offersMemory(['research'])).toBe(false);
    expect(offersMemory(['research', 'schedule'])).toBe(false);
    expect(offersMemory([])).toBe(false);
    expect(() => offersMemory(['nope'])).toThrow(/nope/);
  });
});
