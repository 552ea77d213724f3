import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { SessionStore, TurnStatus } from '@herald/agent-core';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { useTestRedis } from '../../../../../test/helpers/redis.js';
import { KnownThreads } from './known-threads.js';
import { OLD_FINISHED_TURNS_SQL, StoreRetention } from './retention.js';

const log = pino({ level: 'silent' });
const DAY = 24 * 3600_000;

describe.each(STORE_BACKENDS)('store retention on %s', (backend) => {
  const temp = useTempStores(backend);
  const { redis, prefix } = useTestRedis(`retention-${backend}`);
  let runs = 0;

  function retention(store: SessionStore, clock: { t: number }, days: { turns?: number; threads?: number } = {}) {
    return new StoreRetention({
      redis,
      // Each test its own lock, so one test's sweep does not hold off the next one's.
      prefix: `${prefix}:${++runs}`,
      store,
      threads: new KnownThreads(store.sql, () => clock.t),
      log,
      turnRetentionDays: days.turns ?? 30,
      threadRetentionDays: days.threads ?? 90,
      now: () => clock.t,
    });
  }

  async function turnIds(store: SessionStore): Promise<string[]> {
    return (await store.sql.all<{ id: string }>('SELECT id FROM turns ORDER BY id')).map((r) => r.id);
  }

  it('deletes turn records finished longer ago than the retention, keeps unfinished and recent ones, and every message', async () => {
    const store = await temp.open();
    const clock = { t: Date.now() };
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram', userId: '1', chatId: '1' });
    await store.appendMessages(session.id, [
      { role: 'user', content: 'an old question about tides' },
      { role: 'assistant', content: 'an old answer about tides' },
    ]);
    // Created `createdDaysAgo` days ago (by default when it was last updated), last updated `ageDays` days ago.
    const turn = async (id: string, status: TurnStatus, ageDays: number, createdDaysAgo = ageDays): Promise<void> => {
      await store.beginTurn(id, session.id, 1);
      if (status !== 'running') await store.markTurn(id, status, 1);
      await store.sql.run('UPDATE turns SET created_at = ?, updated_at = ? WHERE id = ?', [clock.t - createdDaysAgo * DAY, clock.t - ageDays * DAY, id]);
    };
    await turn('old-delivered', 'delivered', 40);
    await turn('old-failed', 'failed', 31);
    await turn('old-interrupted', 'interrupted', 400);
    await turn('old-replied', 'replied', 40); // reply recorded, not yet delivered: a re-run needs it
    await turn('old-running', 'running', 40);
    await turn('recent-delivered', 'delivered', 29);
    // Started long ago, finished within the retention (delivered after a long outage): kept by its last update.
    await turn('recently-finished', 'delivered', 2, 45);

    expect(await retention(store, clock).sweep()).toEqual({ turns: 3, threads: 0 });
    expect(await turnIds(store)).toEqual(['old-replied', 'old-running', 'recent-delivered', 'recently-finished']);
    expect((await store.getMessages(session.id)).map((m) => m.content)).toEqual(['an old question about tides', 'an old answer about tides']);
    expect((await store.search('tides')).length).toBeGreaterThan(0);

    // 0 keeps them.
    clock.t += 100 * DAY;
    expect(await retention(store, clock, { turns: 0 }).sweep()).toEqual({ turns: 0, threads: 0 });
    expect(await turnIds(store)).toEqual(['old-replied', 'old-running', 'recent-delivered', 'recently-finished']);
  });

  it('finds old turns through the index on their creation; no index that every turn write would move or add to besides', async () => {
    const store = await temp.open();
    const indexes =
      store.sql.dialect === 'postgres'
        ? await store.sql.all<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'turns'")
        : await store.sql.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'turns'");
    const names = indexes.map((r) => r.name);
    expect(names).toContain('turns_created');
    expect(names).not.toContain('turns_updated');
    expect(names).not.toContain('turns_session');
    if (store.sql.dialect === 'sqlite') {
      const plan = await store.sql.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${OLD_FINISHED_TURNS_SQL}`, [0, 0, 1]);
      expect(plan.map((p) => p.detail).join(' | ')).toMatch(/USING INDEX turns_created/);
    }
  });

  it('forgets threads nobody wrote in for the retention period; a message in a thread counts as a use', async () => {
    const store = await temp.open();
    const start = Date.now() - 100 * DAY;
    const clock = { t: start };
    const threads = new KnownThreads(store.sql, () => clock.t);
    await threads.add('slack', 'quiet');
    await threads.add('slack', 'busy');
    // A row remembered before the migration: no last use, only its creation.
    await store.sql.run('INSERT INTO known_threads (platform, thread_id, created_at) VALUES (?, ?, ?)', ['discord', 'legacy', start]);
    clock.t = start + 95 * DAY;
    expect(await threads.has('slack', 'busy')).toBe(true);
    await threads.add('discord', 'new');

    expect(await retention(store, clock).sweep()).toEqual({ turns: 0, threads: 2 });
    expect(await threads.has('slack', 'busy')).toBe(true);
    expect(await threads.has('discord', 'new')).toBe(true);
    expect(await threads.has('slack', 'quiet')).toBe(false);
    expect(await threads.has('discord', 'legacy')).toBe(false);
  });

  it('lets one worker sweep at a time', async () => {
    const store = await temp.open();
    const clock = { t: Date.now() };
    const shared = `${prefix}:shared`;
    const options = {
      redis,
      prefix: shared,
      store,
      threads: new KnownThreads(store.sql),
      log,
      turnRetentionDays: 30,
      threadRetentionDays: 90,
      now: () => clock.t,
    };
    expect(await new StoreRetention(options).sweep()).toEqual({ turns: 0, threads: 0 });
    expect(await new StoreRetention(options).sweep()).toBeNull();
  });
});
