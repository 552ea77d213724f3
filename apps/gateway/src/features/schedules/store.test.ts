/** The schedules table on SQLite and PostgreSQL: the same rows, filters and state changes on both. */
import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { ScheduleStore, scheduleSessionKey, type NewSchedule, type ScheduleOrigin } from './store.js';
import { scheduledPayload } from './runner.js';

const origin = (ownerId: string, chatId = ownerId, chatType = 'dm'): ScheduleOrigin => ({
  platform: 'telegram',
  ownerId,
  ownerName: `user ${ownerId}`,
  conversationId: `telegram:${chatId}`,
  chatType,
  chatId,
  sessionKey: `agent:main:telegram:${chatType}:${chatId}`,
});
const daily = (o: ScheduleOrigin): NewSchedule => ({
  origin: o,
  sessionMode: 'own',
  when: { kind: 'cron', cron: '0 9 * * *' },
  timeZone: 'Europe/Berlin',
  prompt: 'news',
});
const once = (o: ScheduleOrigin, runAt: number): NewSchedule => ({
  origin: o,
  sessionMode: 'origin',
  when: { kind: 'once', runAt },
  timeZone: 'UTC',
  prompt: 'call mum',
});

describe.each(STORE_BACKENDS)('ScheduleStore on %s', (backend) => {
  const temp = useTempStores(backend);

  async function schedules(): Promise<{ store: ScheduleStore; clock: { t: number } }> {
    const clock = { t: Date.UTC(2026, 0, 1) };
    return { store: new ScheduleStore((await temp.open()).sql, () => clock.t), clock };
  }

  it('keeps the agent profile and bot account a task was set under; its runs carry them', async () => {
    const { store } = await schedules();
    const made = await store.create(daily({ ...origin('5'), profile: 'support', account: 'salesbot', sessionKey: 'agent:support:telegram:dm:5' }));
    expect(await store.get(made.id)).toMatchObject({ profile: 'support', account: 'salesbot', sessionKey: 'agent:support:telegram:dm:5' });
    expect(scheduledPayload(made, 1)).toMatchObject({ profile: 'support', account: 'salesbot' });
    const plain = await store.create(daily(origin('6')));
    expect(scheduledPayload(plain, 1)).not.toHaveProperty('profile');
  });

  it('keeps a task as it was given, with numbers as numbers', async () => {
    const { store } = await schedules();
    const runAt = Date.UTC(2026, 0, 2, 9);
    const made = await store.create({ ...once(origin('1'), runAt), origin: { ...origin('1', 'g1', 'thread'), threadId: 'topic-7' } });
    expect(made.id).toMatch(/^[a-z2-9]{8}$/);
    expect(await store.get(made.id)).toEqual({
      id: made.id,
      platform: 'telegram',
      ownerId: '1',
      ownerName: 'user 1',
      conversationId: 'telegram:g1',
      chatType: 'thread',
      chatId: 'g1',
      threadId: 'topic-7',
      sessionKey: 'agent:main:telegram:thread:g1',
      sessionMode: 'origin',
      when: { kind: 'once', runAt },
      timeZone: 'UTC',
      prompt: 'call mum',
      status: 'active',
      createdAt: Date.UTC(2026, 0, 1),
      updatedAt: Date.UTC(2026, 0, 1),
      lastRunAt: null,
      runCount: 0,
    });
    expect((await store.create(daily(origin('1')))).when).toEqual({ kind: 'cron', cron: '0 9 * * *' });
    expect(await store.get('nope')).toBeNull();
  });

  it("lists by owner, chat and status, newest first, and counts a user's active tasks", async () => {
    const { store, clock } = await schedules();
    const a = await store.create(daily(origin('1')));
    clock.t += 1_000;
    const b = await store.create(daily(origin('1', 'g1', 'group')));
    clock.t += 1_000;
    const c = await store.create(daily(origin('2')));
    expect((await store.list()).map((s) => s.id)).toEqual([c.id, b.id, a.id]);
    expect((await store.list({ platform: 'telegram', ownerId: '1' })).map((s) => s.id)).toEqual([b.id, a.id]);
    expect((await store.list({ ownerId: '1', conversationId: 'telegram:g1' })).map((s) => s.id)).toEqual([b.id]);
    expect((await store.list({ limit: 1 })).map((s) => s.id)).toEqual([c.id]);
    expect(await store.countActive('telegram', '1')).toBe(2);
    expect(await store.cancel(a.id)).toBe(true);
    expect(await store.cancel(a.id)).toBe(false);
    expect(await store.countActive('telegram', '1')).toBe(1);
    expect((await store.list({ status: 'cancelled' })).map((s) => s.id)).toEqual([a.id]);
    expect((await store.list({ status: 'active', ownerId: '1' })).map((s) => s.id)).toEqual([b.id]);
  });

  it('counts each run once; a one-off is done after its run, a cancelled task counts no more runs', async () => {
    const { store } = await schedules();
    const cron = await store.create(daily(origin('1')));
    expect(await store.recordRun(cron.id, 100)).toBe(true);
    expect(await store.recordRun(cron.id, 100)).toBe(false);
    expect(await store.recordRun(cron.id, 200)).toBe(true);
    expect(await store.get(cron.id)).toMatchObject({ status: 'active', runCount: 2, lastRunAt: 200 });

    const one = await store.create(once(origin('1'), 500));
    expect(await store.recordRun(one.id, 500)).toBe(true);
    expect(await store.get(one.id)).toMatchObject({ status: 'done', runCount: 1, lastRunAt: 500 });
    expect(await store.cancel(one.id)).toBe(false);

    await store.cancel(cron.id);
    expect(await store.recordRun(cron.id, 300)).toBe(false);
  });
});

it("a task with a session of its own keeps its transcript under the chat's key plus its id", () => {
  expect(scheduleSessionKey('agent:main:telegram:dm:42', 'k3x9q2ab')).toBe('agent:main:telegram:dm:42:schedule:k3x9q2ab');
});
