/**
 * The worker tests' rig (worker.test.ts, scheduled-runs.test.ts, withdraw.test.ts): several TurnWorkers in one process on real Redis
 * and real BullMQ, under a key prefix of their own that is deleted after each test.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { ControlBus } from './control.js';
import { Mailbox, type TurnPayload } from './mailbox.js';
import { TurnProducer, type BusyInputMode, type TurnJobData } from './producer.js';
import { TURN_QUEUE, TurnWorker, type TurnEndHandler, type TurnRunner } from './worker.js';
import { testPrefix } from '../../../../test/helpers/test-run.js';

export const URL = 'redis://127.0.0.1:6379';
export const log = pino({ level: process.env.RIG_LOG ?? 'silent' });
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

export async function rig(opts: {
  workers: number;
  mode: BusyInputMode;
  runTurn: TurnRunner;
  concurrency?: number;
  watchdogMs?: number;
  /** The mailbox the workers use (tests inject faults with a subclass). */
  mailbox?: (redis: Redis, prefix: string) => Mailbox;
  onTurnEnd?: TurnEndHandler;
  partsQuietMs?: number;
  /** The session lock's lease (default 2 s) and BullMQ's job lock (default the worker's): long ones prove a hand-over waits for neither. */
  sessionLockMs?: number;
  jobLockMs?: number;
}) {
  const prefix = testPrefix('worker');
  const redis = new Redis(URL);
  const lockMs = opts.sessionLockMs ?? 2_000;
  const mailbox = new Mailbox(redis, prefix, lockMs);
  const queue = new Queue<TurnJobData>(TURN_QUEUE, { connection: { url: URL, maxRetriesPerRequest: null }, prefix });
  const producer = new TurnProducer(queue, mailbox, new ControlBus(redis, null, prefix), log);
  const workers: TurnWorker[] = [];
  const subs: Redis[] = [];
  /** Texts of the turns the watchdog abandoned, as the worker reported them. */
  const abandoned: string[] = [];
  for (let i = 0; i < opts.workers; i++) {
    const sub = new Redis(URL);
    subs.push(sub);
    const w = new TurnWorker({
      connection: { url: URL },
      prefix,
      mailbox: opts.mailbox?.(redis, prefix) ?? new Mailbox(redis, prefix, lockMs),
      control: new ControlBus(redis, sub, prefix),
      runTurn: opts.runTurn,
      onAbandon: async (turn) => void abandoned.push(turn.entries.map((e) => e.payload.text).join('+')),
      onTurnEnd: opts.onTurnEnd,
      concurrency: opts.concurrency ?? 10,
      busyInputMode: opts.mode,
      log,
      watchdogMs: opts.watchdogMs,
      watchdogGraceMs: 200,
      redisReady: () => redis.status === 'ready',
      partsQuietMs: opts.partsQuietMs,
      jobLockMs: opts.jobLockMs,
    });
    await w.start();
    workers.push(w);
  }
  cleanups.push(async () => {
    await Promise.all(workers.map((w) => w.close(1_000)));
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    for (const s of subs) s.disconnect();
    redis.disconnect();
  });
  return { producer, mailbox, workers, queue, redis, prefix, abandoned };
}

export const payload = (session: number, n: number, text = `s${session} m${n}`): TurnPayload => ({
  text,
  platform: 'telegram',
  conversationId: `telegram:${session}`,
  chatType: 'dm',
  chatId: String(session),
  userId: String(session),
  messageId: `${session}:${n}`,
  platformMessageId: String(n),
});
export const keyOf = (session: number): string => `agent:main:telegram:dm:${session}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(fn: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
}
