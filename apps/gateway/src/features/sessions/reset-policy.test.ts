import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore, type Session } from '@herald/agent-core';
import { Redis } from 'ioredis';
import { Mailbox } from '../../queue/mailbox.js';
import {
  ActivitySeen,
  RESET_NOTICES,
  applyResetPolicy,
  crossedDailyBoundary,
  currentSince,
  expiryReason,
  resetExpiredSession,
  type ResetPolicy,
} from './reset-policy.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const UTC = (h: number, m = 0, day = 10) => Date.UTC(2025, 5, day, h, m);
const policy = (mode: ResetPolicy['mode'], extra: Partial<ResetPolicy> = {}): ResetPolicy => ({
  mode,
  idleMinutes: 1440,
  dailyHour: 4,
  timeZone: 'UTC',
  ...extra,
});

const stores: SessionStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

describe('session reset policy', () => {
  it("currentSince is expiryReason's rule as one time: a session is current exactly when last active at or after it", () => {
    // A fixed pseudo-random walk (deterministic), across zones with daylight-saving changes and odd offsets.
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const zones = [undefined, 'UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'];
    // Around 2025's daylight-saving changes (Europe 30 March / 26 October, US 9 March / 2 November) and elsewhere.
    const days = [Date.UTC(2025, 2, 9), Date.UTC(2025, 2, 30), Date.UTC(2025, 9, 26), Date.UTC(2025, 10, 2), Date.UTC(2025, 5, 10)];
    expect(currentSince(policy('none'), UTC(10))).toBeNull();
    for (const timeZone of zones)
      for (const mode of ['idle', 'daily', 'both'] as const)
        for (const day of days) {
          const p = policy(mode, { timeZone, idleMinutes: 1 + Math.floor(next() * 2000), dailyHour: Math.floor(next() * 24) });
          const now = day + Math.floor(next() * 36 * HOUR);
          const since = currentSince(p, now) as number;
          expect(expiryReason(p, since, now)).toBeNull();
          expect(expiryReason(p, since - 1, now)).not.toBeNull();
          for (let i = 0; i < 20; i++) {
            const at = now - Math.floor(next() * 50 * HOUR);
            expect(at >= since).toBe(expiryReason(p, at, now) === null);
          }
        }
  });

  it('idle: expires after the idle minutes without activity', async () => {
    const p = policy('idle', { idleMinutes: 30 });
    expect(expiryReason(p, UTC(10), UTC(10, 29))).toBeNull();
    expect(expiryReason(p, UTC(10), UTC(10, 30))).toBe('idle');
  });

  it('daily: expires once the daily hour has passed since the last activity, in local time', async () => {
    const p = policy('daily');
    expect(expiryReason(p, UTC(3, 59), UTC(4, 0))).toBe('daily');
    expect(expiryReason(p, UTC(4, 0), UTC(23, 59))).toBeNull();
    expect(expiryReason(p, UTC(23), UTC(3, 59, 11))).toBeNull(); // past midnight, before 04:00
    expect(expiryReason(p, UTC(23), UTC(4, 1, 11))).toBe('daily');
    // 04:00 in Berlin (summer) is 02:00 UTC.
    expect(crossedDailyBoundary({ dailyHour: 4, timeZone: 'Europe/Berlin' }, UTC(1, 59), UTC(2, 1))).toBe(true);
    expect(crossedDailyBoundary({ dailyHour: 4, timeZone: 'Europe/Berlin' }, UTC(2, 1), UTC(3, 59))).toBe(false);
  });

  it('both: whichever comes first; none: never', async () => {
    expect(expiryReason(policy('both', { idleMinutes: 60 }), UTC(10), UTC(11))).toBe('idle');
    expect(expiryReason(policy('both'), UTC(3), UTC(5))).toBe('daily');
    expect(expiryReason(policy('none'), UTC(3), UTC(5, 0, 20))).toBeNull();
  });

  it('a key last seen active at a still-current time needs no read; an activity that may have expired is read again', () => {
    const seen = new ActivitySeen(2);
    const idle = policy('both', { idleMinutes: 30 });
    seen.note('k', UTC(10));
    expect(seen.current(idle, 'k', UTC(10, 29))).toBe(true);
    expect(seen.current(idle, 'k', UTC(10, 30))).toBe(false); // idle may have run out: read the store
    expect(seen.current(policy('daily'), 'k', UTC(4, 0, 11))).toBe(false); // a daily boundary lies between
    expect(seen.current(idle, 'other', UTC(10, 1))).toBe(false); // never seen
    // Bounded: the oldest key goes first.
    seen.note('a', UTC(10));
    seen.note('b', UTC(10));
    expect([seen.current(idle, 'k', UTC(10, 1)), seen.current(idle, 'a', UTC(10, 1)), seen.current(idle, 'b', UTC(10, 1))]).toEqual([false, true, true]);
  });

  it('the API check reads a key once while its session stays current, and still ends it once it expires', async () => {
    const store = await SessionStore.open(':memory:');
    stores.push(store);
    const redis = new Redis('redis://127.0.0.1:6379');
    const prefix = testPrefix('reset-seen');
    try {
      const key = 'agent:main:telegram:dm:3';
      const { session } = await store.getOrCreateSession(key, { source: 'telegram' });
      await store.appendMessages(session.id, [{ role: 'user', content: 'hi' }]);
      let reads = 0;
      const read = store.currentSessionActivity.bind(store);
      store.currentSessionActivity = (k: string) => {
        reads += 1;
        return read(k);
      };
      const conversation = { resetPolicy: policy('idle', { idleMinutes: 60 }), activitySeen: new ActivitySeen() };
      const deps = { store, mailbox: new Mailbox(redis, prefix, 2_000), conversation };
      // The first message reads; the ones after need none.
      expect(await resetExpiredSession(deps, key)).toBeNull();
      expect(await resetExpiredSession(deps, key)).toBeNull();
      expect(await resetExpiredSession(deps, key)).toBeNull();
      expect(reads).toBe(1);
      // The same process under a policy the seen time no longer passes (as an hour later would): read, and ended.
      conversation.resetPolicy = policy('idle', { idleMinutes: 0 });
      expect(await resetExpiredSession(deps, key)).toBe(RESET_NOTICES.idle);
      expect(reads).toBeGreaterThan(1);
      expect((await store.getSession(session.id))?.endReason).toBe('idle');
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('ends an expired session with the reason, and has a notice only when it had activity', async () => {
    const store = await SessionStore.open(':memory:');
    stores.push(store);
    const key = 'agent:main:telegram:dm:1';
    const { session } = await store.getOrCreateSession(key, { source: 'telegram' });
    const p = policy('idle', { idleMinutes: 10 });
    expect(await applyResetPolicy(store, key, p, Date.now() + 5 * MIN)).toBeNull();

    const empty = await applyResetPolicy(store, key, p, Date.now() + 11 * MIN);
    expect(empty).toMatchObject({ reason: 'idle', notice: null, ended: { id: session.id, endReason: 'idle' } });

    const { session: next } = await store.getOrCreateSession(key, { source: 'telegram' });
    expect(next.id).not.toBe(session.id);
    await store.appendMessages(next.id, [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    const daily = await applyResetPolicy(store, key, policy('daily', { timeZone: undefined }), Date.now() + 25 * HOUR);
    expect(daily).toMatchObject({ reason: 'daily', notice: RESET_NOTICES.daily, ended: { id: next.id, endReason: 'daily' } });
    // Already ended: nothing more to do.
    expect(await applyResetPolicy(store, key, p, Date.now() + 50 * HOUR)).toBeNull();
  });

  it('the API check ends an expired session only while it holds the session: never under a running turn', async () => {
    const store = await SessionStore.open(':memory:');
    stores.push(store);
    const redis = new Redis('redis://127.0.0.1:6379');
    const prefix = testPrefix('reset');
    try {
      const mailbox = new Mailbox(redis, prefix, 2_000);
      const key = 'agent:main:telegram:dm:2';
      const { session } = await store.getOrCreateSession(key, { source: 'telegram' });
      await store.appendMessages(session.id, [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ]);
      const deps = { store, mailbox, conversation: { resetPolicy: policy('idle', { idleMinutes: 0 }), activitySeen: new ActivitySeen() } };
      // A turn holds the session: that is activity, nothing is reset under it.
      const turn = await mailbox.acquire(key, 'a-worker');
      if (!('token' in turn)) throw new Error('lock unexpectedly held');
      // The memory flush's stand-in: it records whether the session was still open when it ran.
      const flushed: string[] = [];
      const beforeReset = async (expiring: Session) => {
        const open = (await store.getSession(expiring.id))?.endedAt === null;
        flushed.push(`${expiring.id}:${open ? 'open' : 'ended'}:${(await mailbox.isBusy(key)) ? 'held' : 'free'}`);
      };
      expect(await resetExpiredSession(deps, key, beforeReset)).toBeNull();
      expect((await store.getSession(session.id))?.endedAt).toBeNull();
      await mailbox.release(key, turn.token);
      // Free again: the expired session ends, and the lock the reset took is given back.
      expect(await resetExpiredSession(deps, key, beforeReset)).toBe(RESET_NOTICES.idle);
      // The flush ran once, before the session ended, while the reset held it.
      expect(flushed).toEqual([`${session.id}:open:held`]);
      expect((await store.getSession(session.id))?.endReason).toBe('idle');
      expect(await mailbox.isBusy(key)).toBe(false);
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
