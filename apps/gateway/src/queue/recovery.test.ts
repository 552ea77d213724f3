/**
 * Taking a turn over from a worker that is gone (docs/architecture.md, "Taking over from a dead worker"), with real
 * Redis and real BullMQ: a stopping worker hands back even a turn that ignores its abort, at once and fenced; the
 * janitor leaves a dead worker's job to BullMQ's stalled check instead of reporting it as missing.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { MailboxJanitor } from './janitor.js';
import { TURN_QUEUE, type TurnContext } from './worker.js';
import { URL, keyOf, log, payload, rig, until } from './test-support.js';

/** Leases no test waits out: a turn that moves on did so without waiting for one to expire. */
const LONG_LEASE_MS = 120_000;

describe('a stopping worker hands its turns over at once', () => {
  it('a turn that ignores its abort is run by another worker without waiting for any lease, and the straggler can no longer send', async () => {
    const runs: TurnContext[] = [];
    const never = new Promise<void>(() => undefined);
    const { producer, workers } = await rig({
      workers: 2,
      mode: 'queue',
      sessionLockMs: LONG_LEASE_MS,
      jobLockMs: LONG_LEASE_MS,
      runTurn: async (ctx) => {
        runs.push(ctx);
        // The first run hangs and ignores its AbortSignal (a tool that does not listen): only a hand-over moves on.
        if (runs.length === 1) await never;
      },
    });
    await producer.submit(keyOf(40), payload(40, 1, 'stuck'), 'queue');
    await until(() => runs.length === 1);
    const stopping = workers.find((w) => w.activeTurns > 0);
    expect(stopping).toBeDefined();
    await stopping?.close(0);
    await until(() => runs.length === 2);
    expect(runs.map((r) => r.entries[0].payload.text)).toEqual(['stuck', 'stuck']);
    expect(runs[1].fence).toBeGreaterThan(runs[0].fence);
    // The straggler is fenced out: its reply would not be sent.
    expect(await runs[0].deliveryCheck()).toBe('lock_lost');
  });
});

describe('the janitor and a dead worker', () => {
  it('leaves a mailbox whose job is still active (its lock gone, stalled) to BullMQ, and wakes only one with no job', async () => {
    const { producer, mailbox, queue, redis, prefix } = await rig({ workers: 0, mode: 'queue', runTurn: async () => undefined });
    await producer.submit(keyOf(41), payload(41, 1, 'in a dead worker'), 'queue');
    // A worker takes the job and dies: the job stays active, its lock runs out, the session lock too (never taken here).
    const dead = new Worker(TURN_QUEUE, null, { connection: { url: URL, maxRetriesPerRequest: null }, prefix, autorun: false });
    const job = await dead.getNextJob('dead-token');
    expect(job?.data.sessionKey).toBe(keyOf(41));
    await redis.del(`${prefix}:${TURN_QUEUE}:${job?.id}:lock`);
    expect(await queue.getJobState(job?.id ?? '')).toBe('active');
    // What an ingress killed between the mailbox append and queue.add leaves: no job at all.
    await mailbox.enqueue('telegram.42.1', keyOf(42), payload(42, 1, 'orphan'));
    const janitor = new MailboxJanitor({ redis, prefix, mailbox, queue, log, intervalMs: 100, strandedAfterMs: 0 });
    expect(await janitor.sweep()).toBe(1);
    const woken = await queue.getJobs(['waiting', 'prioritized']);
    expect(woken.map((j) => j.data.sessionKey)).toEqual([keyOf(42)]);
    await dead.close(true);
  });
});
