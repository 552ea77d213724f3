/**
 * The scheduling guarantees with real Redis and real BullMQ, several TurnWorkers in one process (the end-to-end
 * tests repeat the important ones with real processes): one turn at a time per session, arrival order,
 * parallel sessions, interrupts.
 */
import { UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Mailbox } from './mailbox.js';
import { jobIdFor } from './producer.js';
import { TURN_QUEUE, TurnAbort, type TurnContext } from './worker.js';
import { MailboxJanitor } from './janitor.js';
import { keyOf, log, payload, rig, sleep, until } from './test-support.js';

describe('TurnWorker', () => {
  it('runs 20 sessions × 10 messages on 3 workers: one turn at a time per session, in order, sessions in parallel', async () => {
    const done = new Map<string, string[]>();
    const active = new Map<string, number>();
    let overlapInSession = 0;
    let running = 0;
    let maxRunning = 0;
    const { producer } = await rig({
      workers: 3,
      mode: 'queue',
      runTurn: async (ctx: TurnContext) => {
        const n = (active.get(ctx.sessionKey) ?? 0) + 1;
        active.set(ctx.sessionKey, n);
        if (n > 1) overlapInSession++;
        running++;
        maxRunning = Math.max(maxRunning, running);
        await sleep(5 + Math.random() * 20);
        running--;
        active.set(ctx.sessionKey, n - 1);
        const list = done.get(ctx.sessionKey) ?? [];
        list.push(...ctx.entries.map((e) => e.payload.text));
        done.set(ctx.sessionKey, list);
      },
    });
    // Interleave sessions as real traffic would.
    for (let n = 0; n < 10; n++) for (let s = 0; s < 20; s++) await producer.submit(keyOf(s), payload(s, n), 'queue');
    await until(() => [...done.values()].reduce((a, l) => a + l.length, 0) >= 200);
    await sleep(200); // nothing more may arrive
    expect(overlapInSession).toBe(0);
    expect(maxRunning).toBeGreaterThan(1);
    for (let s = 0; s < 20; s++) expect(done.get(keyOf(s))).toEqual(Array.from({ length: 10 }, (_, n) => `s${s} m${n}`));
  });

  it("a turn's after-steps (the reaction swap) run once its entry is acknowledged: the session is free by then", async () => {
    const busyDuringAfter: boolean[] = [];
    const { producer, mailbox } = await rig({
      workers: 1,
      mode: 'queue',
      runTurn: async (ctx) => ({ afterAck: async () => void busyDuringAfter.push(await mailbox.isBusy(ctx.sessionKey)) }),
    });
    await producer.submit(keyOf(40), payload(40, 0), 'queue');
    await until(() => busyDuringAfter.length === 1);
    // A follow-up sent while the ✅ is being added finds the session free, so it is not "queued".
    expect(busyDuringAfter).toEqual([false]);
  });

  it("a turn's logger names its session, job and turn", async () => {
    const bindings: Array<Record<string, unknown>> = [];
    const { producer } = await rig({
      workers: 1,
      mode: 'queue',
      runTurn: async (ctx) => void bindings.push(ctx.log.bindings()),
    });
    await producer.submit(keyOf(41), payload(41, 0), 'queue');
    await until(() => bindings.length === 1);
    expect(bindings[0]).toMatchObject({ sessionKey: keyOf(41), jobId: expect.any(String), turnId: expect.any(String) });
  });

  it('interrupt mode: a new message aborts the running turn with an interrupt, then runs', async () => {
    const seen: string[] = [];
    const aborted: string[] = [];
    // Recorded here and asserted below: the worker swallows a turn's errors, so an expect inside could never fail.
    const mayDeliver: Array<[string, boolean]> = [];
    const { producer } = await rig({
      workers: 2,
      mode: 'interrupt',
      runTurn: async (ctx) => {
        const text = ctx.entries.map((e) => e.payload.text).join('+');
        seen.push(text);
        if (text === 'first') {
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          const reason: unknown = ctx.signal.reason;
          aborted.push(reason instanceof TurnAbort ? reason.kind : 'other');
        }
        mayDeliver.push([text, await ctx.canDeliver()]);
      },
    });
    await producer.submit(keyOf(1), payload(1, 1, 'first'), 'interrupt');
    await until(() => seen.length === 1);
    await producer.submit(keyOf(1), payload(1, 2, 'second'), 'interrupt');
    await until(() => mayDeliver.length === 2);
    expect(aborted).toEqual(['interrupt']);
    expect(seen).toEqual(['first', 'second']);
    // The interrupted turn lost its right to reply; the one that replaced it has it.
    expect(mayDeliver).toEqual([
      ['first', false],
      ['second', true],
    ]);
  });

  it('interrupt mode merges messages that piled up, so none is dropped', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { producer } = await rig({
      workers: 1,
      mode: 'interrupt',
      runTurn: async (ctx) => {
        seen.push(ctx.entries.map((e) => e.payload.text).join('+'));
        if (seen.length === 1) await Promise.race([gate, new Promise((r) => ctx.signal.addEventListener('abort', r))]);
      },
    });
    await producer.submit(keyOf(2), payload(2, 1, 'a'), 'interrupt');
    await until(() => seen.length === 1);
    await producer.submit(keyOf(2), payload(2, 2, 'b'), 'interrupt');
    await producer.submit(keyOf(2), payload(2, 3, 'c'), 'interrupt');
    release();
    await until(() => seen.length === 2);
    expect(seen).toEqual(['a', 'b+c']);
  });

  it('steer mode hands text to the running turn, which absorbs it', async () => {
    const steered: string[][] = [];
    const turns: string[] = [];
    const { producer, mailbox } = await rig({
      workers: 1,
      mode: 'steer',
      runTurn: async (ctx) => {
        turns.push(ctx.entries[0].payload.text);
        if (turns.length === 1) {
          // Poll like the agent loop does after each tool batch.
          for (let i = 0; i < 200; i++) {
            const got = ctx.takeSteerMessages();
            if (got.length) {
              steered.push(got);
              break;
            }
            await sleep(10);
          }
        }
      },
    });
    await producer.submit(keyOf(3), payload(3, 1, 'build it'), 'steer');
    await until(() => turns.length === 1);
    await producer.submit(keyOf(3), payload(3, 2, 'use blue'), 'steer');
    await until(() => steered.length === 1);
    // The turn ends and acknowledges both entries: the absorbed one is gone with it, never run on its own.
    await until(async () => (await mailbox.length(keyOf(3))) === 0 && !(await mailbox.isBusy(keyOf(3))));
    expect(steered).toEqual([['use blue']]);
    expect(turns).toEqual(['build it']); // absorbed, not run again
  });

  it('the watchdog aborts a turn with no agent activity, abandons one that ignores the abort, and the session moves on', async () => {
    const outcome: string[] = [];
    const { producer, abandoned } = await rig({
      workers: 1,
      mode: 'queue',
      watchdogMs: 300,
      runTurn: async (ctx) => {
        const text = ctx.entries[0].payload.text;
        if (text === 'busy but alive') {
          // Activity keeps the watchdog away for longer than its limit.
          for (let i = 0; i < 8; i++) {
            ctx.touch();
            await sleep(100);
          }
          outcome.push('alive finished');
        } else if (text === 'silent') {
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          const reason: unknown = ctx.signal.reason;
          outcome.push(`silent aborted: ${reason instanceof TurnAbort ? reason.kind : 'other'}`);
        } else if (text === 'hung') {
          await new Promise(() => undefined); // a tool that ignores its AbortSignal
        } else {
          outcome.push(`ran ${text}`);
        }
      },
    });
    for (const [n, text] of ['busy but alive', 'silent', 'hung', 'after'].entries()) await producer.submit(keyOf(9), payload(9, n, text), 'queue');
    await until(() => outcome.includes('ran after'), 15_000);
    expect(outcome).toEqual(['alive finished', 'silent aborted: watchdog', 'ran after']);
    // Only the turn that ignored its abort is handed over to be fenced out (and the user told).
    expect(abandoned).toEqual(['hung']);
  });

  it('a job that fails on a Redis error is retried: the session is freed at once and nothing is stranded', async () => {
    const ran: string[] = [];
    let failures = 1;
    class BlinkingMailbox extends Mailbox {
      override async ackAndNext(sessionKey: string, token: string, headRaw: string, absorbed: string[] = []) {
        if (failures-- > 0) throw new Error('Connection is closed.');
        return super.ackAndNext(sessionKey, token, headRaw, absorbed);
      }
    }
    const { producer, mailbox } = await rig({
      workers: 1,
      mode: 'queue',
      mailbox: (redis, prefix) => new BlinkingMailbox(redis, prefix, 2_000),
      runTurn: async (ctx) => {
        ran.push(ctx.entries[0].payload.text);
      },
    });
    // The only message of the session: nothing but the failed job's own retry can finish it.
    await producer.submit(keyOf(12), payload(12, 1, 'one'), 'queue');
    await until(() => ran.length >= 2, 15_000);
    // The retry acknowledges the entry and frees the session: nothing is left to run it a third time.
    await until(async () => (await mailbox.length(keyOf(12))) === 0 && !(await mailbox.isBusy(keyOf(12))), 15_000);
    // At least once: the turn whose acknowledgement failed runs again (the outbox keeps its reply from repeating).
    expect(ran).toEqual(['one', 'one']);
  });

  it('the janitor wakes a mailbox left without a job, and leaves busy or fresh ones alone', async () => {
    const ran: string[] = [];
    const { mailbox, queue, redis, prefix } = await rig({
      workers: 1,
      mode: 'queue',
      runTurn: async (ctx) => {
        ran.push(ctx.entries[0].payload.text);
      },
    });
    // What an ingress that died between the mailbox append and queue.add leaves behind.
    await mailbox.enqueue('telegram.13.1', keyOf(13), payload(13, 1, 'orphan'));
    const janitor = new MailboxJanitor({ redis, prefix, mailbox, queue, log, intervalMs: 100, strandedAfterMs: 0 });
    // A locked session is someone's work in progress: not woken.
    await mailbox.enqueue('telegram.14.1', keyOf(14), payload(14, 1, 'held'));
    const held = await mailbox.acquire(keyOf(14), 'another-worker');
    expect(await janitor.sweep()).toBe(1);
    // The turn runs, then its job acknowledges the entry: wait for the mailbox to empty, not for the turn alone.
    await until(async () => ran.includes('orphan') && (await mailbox.length(keyOf(13))) === 0);
    expect(ran).toEqual(['orphan']);
    if ('token' in held) await mailbox.release(keyOf(14), held.token);
  });

  it('interrupt mode in a shared session: only the author of the running turn interrupts it; others wait', async () => {
    const seen: string[] = [];
    const aborted: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { producer } = await rig({
      workers: 1,
      mode: 'interrupt',
      runTurn: async (ctx) => {
        const text = ctx.entries.map((e) => e.payload.text).join('+');
        seen.push(text);
        if (text === 'ana asks') {
          await Promise.race([gate, new Promise((r) => ctx.signal.addEventListener('abort', r))]);
          if (ctx.signal.aborted) aborted.push(text);
        }
      },
    });
    const thread = 'agent:main:discord:thread:C:T';
    await producer.submit(thread, { ...payload(15, 1, 'ana asks'), userId: 'ana' }, 'interrupt');
    await until(() => seen.length === 1);
    await producer.submit(thread, { ...payload(15, 2, 'bo chimes in'), userId: 'bo' }, 'interrupt');
    await sleep(300);
    expect(aborted).toEqual([]); // bo did not cancel ana's answer
    release();
    await until(() => seen.length === 2);
    expect(seen).toEqual(['ana asks', 'bo chimes in']);
  });
});

/** A mailbox whose lock cannot be taken for one session the first `times` tries (a job's `take`): the job of that session fails. */
function failingAcquire(sessionKey: string, times: number, error: () => Error) {
  let left = times;
  return (redis: Redis, prefix: string): Mailbox =>
    new (class extends Mailbox {
      override async take(key: string, workerId: string, entry: { entryId: string; seq: number }) {
        if (key === sessionKey && left-- > 0) throw error();
        return super.take(key, workerId, entry);
      }
    })(redis, prefix, 2_000);
}

/** Sweeps until `done` holds (a sweep is refused while another one's lock is fresh, so keep trying). */
async function sweepUntil(janitor: MailboxJanitor, done: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await janitor.sweep();
    await sleep(20);
  }
}

/** A worker that records the turns it runs, and an entry left without a job in session `n`'s mailbox. */
async function orphanIn(n: number, mailbox?: (redis: Redis, prefix: string) => Mailbox) {
  const ran: string[] = [];
  const r = await rig({ workers: 1, mode: 'queue', mailbox, runTurn: async (ctx) => void ran.push(ctx.entries[0].payload.text) });
  await r.mailbox.enqueue(`telegram.${n}.1`, keyOf(n), payload(n, 1, 'orphan'));
  return { ...r, ran };
}

describe('MailboxJanitor', () => {
  it('a wake-up job that fails is tried again', async () => {
    const { ran, mailbox, queue, redis, prefix } = await orphanIn(
      20,
      failingAcquire(keyOf(20), 1, () => new Error('Connection is closed.')),
    );
    const janitor = new MailboxJanitor({ redis, prefix, mailbox, queue, log, intervalMs: 60_000, strandedAfterMs: 0 });
    expect(await janitor.sweep()).toBe(1);
    // One sweep only (the next would wait a minute): the wake-up job's own retry must run the turn.
    await until(() => ran.includes('orphan'));
    expect(ran).toEqual(['orphan']);
  });

  it('a wake-up job that failed for good does not keep later sweeps from waking the mailbox', async () => {
    const { ran, mailbox, queue, redis, prefix } = await orphanIn(
      21,
      failingAcquire(keyOf(21), 1, () => new UnrecoverableError('broken for this attempt')),
    );
    const janitor = new MailboxJanitor({ redis, prefix, mailbox, queue, log, intervalMs: 100, strandedAfterMs: 0, wakeDedupTtlMs: 100 });
    expect(await janitor.sweep()).toBe(1);
    const failed = async (): Promise<number> => (await queue.getJobCounts('failed')).failed;
    const end = Date.now() + 20_000;
    while ((await failed()) < 1) {
      if (Date.now() > end) throw new Error('the wake-up job never failed');
      await sleep(20);
    }
    expect(ran).toEqual([]);
    await sweepUntil(janitor, () => ran.includes('orphan'));
    expect(ran).toEqual(['orphan']);
  });

  it('skips a mailbox it cannot read and still wakes the others', async () => {
    const { ran, mailbox, queue, redis, prefix } = await orphanIn(23);
    await redis.rpush(mailbox.key('mbox', keyOf(22)), 'not an entry');
    const janitor = new MailboxJanitor({ redis, prefix, mailbox, queue, log, intervalMs: 100, strandedAfterMs: 0 });
    expect(await janitor.sweep()).toBe(1);
    await until(() => ran.includes('orphan'));
    expect(ran).toEqual(['orphan']);
  });
});

describe('turn jobs', () => {
  it('carry no message text: the mailbox keeps it; failed ones are capped by count and age', async () => {
    const { producer, queue, redis, prefix } = await rig({ workers: 0, mode: 'queue', runTurn: async () => undefined });
    const text = 'my card number is 4111 1111 1111 1111';
    await producer.submit(keyOf(30), payload(30, 1, text), 'queue');
    const [job] = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
    expect(job.data).toEqual({ sessionKey: keyOf(30), entryId: jobIdFor('telegram', '30:1'), seq: 1 });
    // Nothing BullMQ stores for the job (and would keep in its completed or failed set) has the text.
    expect(JSON.stringify(await redis.hgetall(`${prefix}:${TURN_QUEUE}:${job.id}`))).not.toContain('4111');
    const kept = job.opts.removeOnFail as { age?: number; count?: number };
    expect(kept.count).toBeLessThanOrEqual(1_000);
    expect(kept.age).toBeLessThanOrEqual(7 * 24 * 3600);
  });

  it('a redelivery the mailbox takes after its redelivery window is answered at once, not after a janitor sweep', async () => {
    const ran: string[] = [];
    const { producer, mailbox, redis } = await rig({
      workers: 1,
      mode: 'interrupt',
      runTurn: async (ctx) => void ran.push(ctx.entries.map((e) => e.payload.text).join('+')),
    });
    await producer.submit(keyOf(31), payload(31, 1, 'hello'), 'interrupt');
    await until(() => ran.length === 1);
    expect(await producer.submit(keyOf(31), payload(31, 1, 'hello'), 'interrupt')).toEqual({ status: 'duplicate' });
    // The redelivery memory ran out (an hour later, as far as the mailbox can tell): the message is new to it,
    // and its job must not be swallowed by the finished job of the first delivery.
    await redis.del(mailbox.key('seen', jobIdFor('telegram', '31:1')));
    expect(await producer.submit(keyOf(31), payload(31, 1, 'hello'), 'interrupt')).toMatchObject({ status: 'queued' });
    await until(() => ran.length === 2);
    expect(ran).toEqual(['hello', 'hello']);
  });
});
