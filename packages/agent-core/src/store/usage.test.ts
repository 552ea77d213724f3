import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const DAY = 86_400_000;

describe.each(STORE_BACKENDS)('usage on %s', (backend) => {
  const temp = useTempStores(backend);

  it('sums tokens and spend per model and per UTC day, most expensive model first', async () => {
    const store = await temp.open();
    const a = (await store.getOrCreateSession('k:a', { source: 'telegram', model: 'openai:gpt-4.1-mini' })).session;
    const b = (await store.getOrCreateSession('k:b', { source: 'api', model: 'openai:gpt-4.1-mini' })).session;
    const c = (await store.getOrCreateSession('k:c', { source: 'slack', model: 'anthropic:claude-sonnet-4-5' })).session;
    const d = (await store.getOrCreateSession('k:d', { source: 'cli' })).session;
    await store.addUsage(a.id, { input: 100, output: 10, cacheRead: 5, cacheWrite: 1, costUsd: 0.25 });
    await store.addUsage(b.id, { input: 50, output: 20, cacheRead: 0, cacheWrite: 0, costUsd: 0.5 });
    await store.addUsage(c.id, { input: 1000, output: 100, cacheRead: 0, cacheWrite: 0, costUsd: 2 });
    await store.addUsage(d.id, { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 });

    const byModel = await store.usageByModel();
    expect(byModel).toEqual([
      { model: 'anthropic:claude-sonnet-4-5', sessions: 1, inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 2 },
      { model: 'openai:gpt-4.1-mini', sessions: 2, inputTokens: 150, outputTokens: 30, cacheReadTokens: 5, cacheWriteTokens: 1, costUsd: 0.75 },
      { model: null, sessions: 1, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
    ]);

    const today = new Date(Math.floor(Date.now() / DAY) * DAY).toISOString().slice(0, 10);
    const byDay = await store.usageByDay();
    expect(byDay.map((u) => [u.day, u.model, u.costUsd])).toEqual([
      [today, 'anthropic:claude-sonnet-4-5', 2],
      [today, 'openai:gpt-4.1-mini', 0.75],
      [today, null, 0],
    ]);
    // Sessions started before `since` are left out.
    expect(await store.usageByModel({ since: Date.now() + DAY })).toEqual([]);
  });

  it('sums per agent profile; sessions recorded without one count for default', async () => {
    const store = await temp.open();
    const a = (await store.getOrCreateSession('k:a', { source: 'telegram', model: 'openai:gpt-4.1-mini' })).session;
    const b = (await store.getOrCreateSession('k:b', { source: 'slack', model: 'openai:gpt-4.1-mini', profile: 'support' })).session;
    const c = (await store.getOrCreateSession('k:c', { source: 'slack', model: 'anthropic:claude-sonnet-4-5', profile: 'support' })).session;
    await store.addUsage(a.id, { input: 10, output: 1, cacheRead: 0, cacheWrite: 0, costUsd: 0.1 });
    await store.addUsage(b.id, { input: 20, output: 2, cacheRead: 3, cacheWrite: 0, costUsd: 0.2 });
    await store.addUsage(c.id, { input: 30, output: 3, cacheRead: 0, cacheWrite: 4, costUsd: 0.3 });
    expect(await store.usageByProfile()).toEqual([
      { profile: 'support', sessions: 2, inputTokens: 50, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 4, costUsd: expect.closeTo(0.5, 9) },
      { profile: 'default', sessions: 1, inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.1 },
    ]);
    expect(await store.usageByProfile({ since: Date.now() + DAY })).toEqual([]);
  });
});
