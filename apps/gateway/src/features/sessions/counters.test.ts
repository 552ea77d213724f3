/**
 * A session's API calls (counters.ts): counted with the turn's usage in the sessions row, plus what the older
 * session_counters table holds (counts from before the column, or from a worker of an older version still running
 * during an upgrade), on SQLite and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { SessionCounters } from './counters.js';

describe.each(STORE_BACKENDS)('session API calls on %s', (backend) => {
  const temp = useTempStores(backend);
  const tokens = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

  it("adds the calls counted with each usage and the older table's", async () => {
    const store = await temp.open();
    const counters = new SessionCounters(store);
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:7', { source: 'telegram', userId: '7' });
    const { session: other } = await store.getOrCreateSession('agent:main:telegram:dm:8', { source: 'telegram', userId: '8' });
    expect(await counters.apiCalls(session.id)).toBe(0);

    await store.appendMessages(
      session.id,
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      { turnId: 't1', usage: { ...tokens, apiCalls: 2 } },
    );
    await store.addUsage(session.id, { ...tokens, apiCalls: 1 });
    await store.addUsage(session.id, tokens); // no count: nothing added
    await store.addUsage(session.id, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, apiCalls: 4 });
    // A count an older worker wrote to session_counters.
    await store.sql.run('INSERT INTO session_counters (session_id, api_calls, updated_at) VALUES (?, ?, ?)', [session.id, 3, Date.now()]);

    expect(await counters.apiCalls(session.id)).toBe(10);
    // The tokens went in with the same statements.
    expect((await store.getSession(session.id))?.inputTokens).toBe(30);
    expect(await counters.apiCalls(other.id)).toBe(0);
    expect(await counters.apiCalls('no-such-session')).toBe(0);
  });
});
