/**
 * Scheduled tasks against real Redis, BullMQ and a SQLite store: the rules (checked against a clock the test
 * controls), the job schedulers they make, cancelling, reconciling with a Redis that lost them — and BullMQ's own
 * timing proven by a one-off a few milliseconds ahead that two runners race for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '@herald/agent-core';
import { useTestRedis } from '../../../../../test/helpers/redis.js';
import { waitFor } from '../../../../../test/helpers/ports.js';
import type { EnqueueResult, TurnPayload } from '../../queue/mailbox.js';
import { ScheduleRunner, scheduledPayload, taskMessage } from './runner.js';
import { SCHEDULE_QUEUE, ScheduleService, type ScheduleJobData } from './service.js';
import { ScheduleStore, type ScheduleOrigin } from './store.js';

const log = pino({ level: 'silent' });
const { redis, prefix } = useTestRedis('schedules');
const dir = mkdtempSync(join(tmpdir(), 'herald-schedules-'));
let store: SessionStore;
let queue: Queue<ScheduleJobData>;
const runners: ScheduleRunner[] = [];

beforeAll(async () => {
  store = await SessionStore.open(join(dir, 'herald.db'));
  queue = new Queue<ScheduleJobData>(SCHEDULE_QUEUE, { connection: { url: 'redis://127.0.0.1:6379', maxRetriesPerRequest: null }, prefix });
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let users = 0;
const origin = (): ScheduleOrigin => {
  const id = `u${++users}`;
  return {
    platform: 'telegram',
    ownerId: id,
    ownerName: 'Ann',
    conversationId: `telegram:${id}`,
    chatType: 'dm',
    chatId: id,
    sessionKey: `agent:main:telegram:dm:${id}`,
  };
};

function service(clock = { t: Date.now() }, maxPerUser = 5): ScheduleService {
  return new ScheduleService({
    store: new ScheduleStore(store.sql, () => clock.t),
    queue,
    defaultTimeZone: 'Europe/Berlin',
    defaultSession: 'own',
    maxPerUser,
    now: () => clock.t,
  });
}

/** A runner whose turns are recorded in `submitted` instead of queued; `allowed` is the access policy. */
function makeRunner(submitted: Array<{ key: string; payload: TurnPayload }>, allowed = true): ScheduleRunner {
  const submit = async (key: string, payload: TurnPayload): Promise<EnqueueResult> => {
    submitted.push({ key, payload });
    return { status: 'queued', seq: submitted.length, position: 1, busy: false };
  };
  return new ScheduleRunner({
    connection: { url: 'redis://127.0.0.1:6379' },
    prefix,
    store: new ScheduleStore(store.sql),
    queue,
    submit,
    ownerAllowed: async () => allowed,
    log,
  });
}

async function runner(submitted: Array<{ key: string; payload: TurnPayload }>): Promise<ScheduleRunner> {
  const r = makeRunner(submitted);
  runners.push(r);
  await r.start();
  return r;
}

describe('ScheduleService', () => {
  it('a repeating task gets a job scheduler whose next run is the one Herald shows', async () => {
    const s = await service().create({ origin: origin(), prompt: 'weekly summary', cron: '0 9 * * 1' });
    expect(s).toMatchObject({ status: 'active', sessionMode: 'own', timeZone: 'Europe/Berlin', when: { kind: 'cron', cron: '0 9 * * 1' } });
    const scheduler = await queue.getJobScheduler(s.id);
    expect(scheduler).toMatchObject({ key: s.id, pattern: '0 9 * * 1', tz: 'Europe/Berlin', next: s.nextRunAt, template: { data: { scheduleId: s.id } } });
  });

  it('a one-off gets a scheduler that starts at its time and runs once', async () => {
    const clock = { t: Date.now() };
    const s = await service(clock).create({ origin: origin(), prompt: 'call mum', inMinutes: 90, session: 'origin' });
    expect(s.nextRunAt).toBe(clock.t + 90 * 60_000);
    expect(s.sessionMode).toBe('origin');
    expect(await queue.getJobScheduler(s.id)).toMatchObject({ next: clock.t + 90 * 60_000, limit: 1 });
  });

  it('checks against its own clock and limits, with messages the model can act on', async () => {
    const clock = { t: Date.UTC(2030, 0, 1, 12) };
    const svc = service(clock, 2);
    const o = origin();
    await expect(svc.create({ origin: o, prompt: 'x', at: '2030-01-01T12:30' })).rejects.toThrow(/in the past/); // 12:30 Berlin = 11:30 UTC
    await svc.create({ origin: o, prompt: 'x', at: '2030-01-01T14:00' });
    await svc.create({ origin: o, prompt: 'y', cron: '0 8 * * *', timeZone: 'America/New_York' });
    await expect(svc.create({ origin: o, prompt: 'z', inMinutes: 5 })).rejects.toThrow(
      'you have 2 scheduled tasks, the most allowed; cancel one first (/schedules)',
    );
    await expect(svc.create({ origin: origin(), prompt: '  ', inMinutes: 5 })).rejects.toThrow(/prompt .* must not be empty/);
    await expect(svc.create({ origin: origin(), prompt: 'x'.repeat(4_001), inMinutes: 5 })).rejects.toThrow(/prompt is too long/);
    await expect(svc.create({ origin: origin(), prompt: 'x', inMinutes: 5, timeZone: 'Berlin' })).rejects.toThrow(/unknown time zone "Berlin"/);
    // Nothing refused was recorded.
    expect((await svc.list({ ownerId: o.ownerId })).map((s) => s.prompt).sort()).toEqual(['x', 'y']);
  });

  it('cancel: only the owner (or the admin), once; the scheduler and its pending run are gone from Redis', async () => {
    const svc = service();
    const o = origin();
    const s = await svc.create({ origin: o, prompt: 'soon', inMinutes: 60 });
    expect(await queue.getDelayed()).toEqual(expect.arrayContaining([expect.objectContaining({ id: `repeat:${s.id}:${s.nextRunAt}` })]));
    expect(await svc.cancel(s.id, { platform: 'telegram', ownerId: 'someone-else' })).toBe('not_found');
    expect(await svc.cancel(s.id.toUpperCase(), o)).toBe('cancelled');
    expect(await svc.cancel(s.id, o)).toBe('not_active');
    expect(await queue.getJobScheduler(s.id)).toBeUndefined();
    expect((await queue.getDelayed()).map((j) => j.id)).not.toContain(`repeat:${s.id}:${s.nextRunAt}`);
    const admin = await svc.create({ origin: o, prompt: 'weekly', cron: '0 9 * * 1' });
    expect(await svc.cancel(admin.id)).toBe('cancelled');
    expect(await svc.cancel('nosuchid')).toBe('not_found');
  });

  it('reconcile puts back a scheduler Redis lost and removes one whose task is no longer active', async () => {
    const svc = service();
    const lost = await svc.create({ origin: origin(), prompt: 'lost in Redis', cron: '0 7 * * *' });
    const stale = await svc.create({ origin: origin(), prompt: 'cancelled in the store only', cron: '0 8 * * *' });
    await queue.removeJobScheduler(lost.id);
    await svc.store.cancel(stale.id);
    expect(await svc.reconcile(redis, prefix, log)).toEqual({ restored: 1, removed: 1 });
    expect(await queue.getJobScheduler(lost.id)).toMatchObject({ pattern: '0 7 * * *', next: lost.nextRunAt });
    expect(await queue.getJobScheduler(stale.id)).toBeUndefined();
    expect(await svc.reconcile(redis, prefix, log)).toEqual({ restored: 0, removed: 0 });
  });
});

describe('ScheduleRunner (BullMQ timing, real Redis)', () => {
  it('a one-off a few milliseconds ahead runs once with two runners up: its turn is submitted, the task is done', async () => {
    const submitted: Array<{ key: string; payload: TurnPayload }> = [];
    await runner(submitted);
    await runner(submitted);
    const o = origin();
    const s = await service().create({ origin: o, prompt: 'stretch', inMinutes: 0.001 });
    await waitFor(async () => (await service().get(s.id))?.status === 'done', { what: 'the run' });
    // Its scheduler is removed after the run, so no other job for it exists or can come.
    await waitFor(async () => (await queue.getJobScheduler(s.id)) === undefined, { what: 'the scheduler removed' });
    expect(submitted).toHaveLength(1);
    expect(submitted[0].key).toBe(o.sessionKey);
    expect(submitted[0].payload).toMatchObject({
      text: taskMessage((await service().get(s.id))!),
      platform: 'telegram',
      conversationId: o.conversationId,
      userId: o.ownerId,
      messageId: `schedule.${s.id}.${s.nextRunAt}`,
      scheduled: { id: s.id, session: 'own', runAt: s.nextRunAt },
    });
    expect(submitted[0].payload.platformMessageId).toBeUndefined();
    expect(await service().get(s.id)).toMatchObject({ runCount: 1, lastRunAt: s.nextRunAt });
  });

  it('a run of a task cancelled meanwhile queues nothing and ends its scheduler', async () => {
    const submitted: Array<{ key: string; payload: TurnPayload }> = [];
    const r = makeRunner(submitted);
    const s = await service().create({ origin: origin(), prompt: 'daily', cron: '0 6 * * *' });
    await service().store.cancel(s.id);
    expect(await r.run({ data: { scheduleId: s.id }, id: `repeat:${s.id}:1000`, opts: {}, timestamp: 1000 })).toBe('not active');
    expect(submitted).toEqual([]);
    expect(await queue.getJobScheduler(s.id)).toBeUndefined();
  });

  it('a run counted by an attempt that died before queuing its turn is still queued when the job runs again', async () => {
    const submitted: Array<{ key: string; payload: TurnPayload }> = [];
    const r = makeRunner(submitted);
    const o = origin();
    const s = await service().create({ origin: o, prompt: 'once', inMinutes: 60 });
    const job = { data: { scheduleId: s.id }, id: `repeat:${s.id}:${s.nextRunAt}`, opts: { prevMillis: s.nextRunAt ?? 0 }, timestamp: 0 };
    await service().store.recordRun(s.id, s.nextRunAt ?? 0); // the first attempt got this far
    expect(await r.run(job)).toBe('queued');
    expect(submitted.map((x) => x.key)).toEqual([o.sessionKey]);
    expect(await service().get(s.id)).toMatchObject({ status: 'done', runCount: 1 });
    expect(await queue.getJobScheduler(s.id)).toBeUndefined();
  });

  it('a task whose owner is no longer allowed (pairing revoked, allowlist changed) does not reach the agent', async () => {
    const submitted: Array<{ key: string; payload: TurnPayload }> = [];
    const r = makeRunner(submitted, false);
    const s = await service().create({ origin: origin(), prompt: 'once', inMinutes: 60 });
    const job = { data: { scheduleId: s.id }, id: `repeat:${s.id}:${s.nextRunAt}`, opts: { prevMillis: s.nextRunAt ?? 0 }, timestamp: 0 };
    expect(await r.run(job)).toBe('owner not allowed');
    expect(submitted).toEqual([]);
    expect(await service().get(s.id)).toMatchObject({ status: 'done' });
    expect(await queue.getJobScheduler(s.id)).toBeUndefined();
  });

  it('the task message says what it is and whose; the run is marked so /stop can keep it', () => {
    const s = {
      id: 'abcd2345',
      ownerId: '7',
      ownerName: 'Ann',
      when: { kind: 'cron', cron: '0 9 * * 1' },
      timeZone: 'Europe/Berlin',
      prompt: 'Summarise the week.',
    } as const;
    const full = {
      ...s,
      platform: 'telegram',
      conversationId: 'telegram:7',
      chatType: 'dm',
      chatId: '7',
      sessionKey: 'k',
      sessionMode: 'own',
      status: 'active',
      createdAt: 0,
      updatedAt: 0,
      lastRunAt: null,
      runCount: 0,
    } as const;
    expect(taskMessage(full)).toBe(
      '[Scheduled task abcd2345, set by Ann (repeats: cron "0 9 * * 1" in Europe/Berlin). It is due now: do what it says; your answer is sent to the chat.]\nSummarise the week.',
    );
    expect(JSON.stringify(scheduledPayload(full, 5))).toContain('"scheduled":{"id":"abcd2345"');
  });
});
