/**
 * SIGTERM while the queue's Redis or the database is gone: a worker in the middle of a turn must still exit within
 * the drain timeout (before, BullMQ and the heartbeat waited on the dead connection until the 3 s safety net killed
 * the process with exit code 1 and nothing said what was left behind), saying what it abandoned and that the queue
 * will redeliver it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgresSchema, TEST_DATABASE_URL } from '../packages/agent-core/src/store/test-support.js';
import { startFakeOpenAI } from './fakes/llm/index.js';
import { startTelegramFake } from './fakes/telegram/index.js';
import { telegramEnv } from './helpers/env.js';
import { startGateway } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { startTestRedis } from './helpers/redis-server.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

const DRAIN_MS = 2_000;

type LogLine = Record<string, unknown>;
const says =
  (start: string) =>
  (l: LogLine): boolean =>
    typeof l.msg === 'string' && l.msg.startsWith(start);

/** Exit 0, 'stopped', and neither the safety net (drain + 3 s) nor the close grace (drain + 2 s) was needed. */
function expectCleanExit(code: number | null, logs: LogLine[]): void {
  expect(logs.some((l) => l.msg === 'stopped')).toBe(true);
  expect(logs.some(says('shutdown took longer'))).toBe(false);
  expect(logs.some((l) => typeof l.msg === 'string' && l.msg.includes('the shutdown deadline passed'))).toBe(false);
  expect(code).toBe(0);
}

/** An OpenAI stand-in that never answers `text`; resolves `started` when that request arrives. */
async function modelThatHangsOn(text: string): Promise<{ llm: Awaited<ReturnType<typeof startFakeOpenAI>>; started: Promise<void> }> {
  const llm = await startFakeOpenAI();
  cleanups.push(() => llm.close());
  let inModel!: () => void;
  const started = new Promise<void>((resolve) => (inModel = resolve));
  const never = new Promise<never>(() => undefined);
  llm.respondWith(async (req) => {
    if (lastUserText(req) === text) {
      inModel();
      await never;
    }
    return { text: 'ok' };
  });
  return { llm, started };
}
/** The job lock the log line names (set, not the default, so the line asserted stays the same when defaults move). */
const JOB_LOCK_MS = 30_000;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('SIGTERM with Redis killed under a running worker', () => {
  it('exits 0 within the drain timeout, logging the abandoned job and that the queue redelivers it', async () => {
    const redis = await startTestRedis();
    cleanups.push(() => redis.stop());
    const tg = await startTelegramFake();
    cleanups.push(() => tg.close());
    const { llm, started: turnRunning } = await modelThatHangsOn('think for a long time');
    const gw = await startGateway({
      env: telegramEnv(tg, llm, { REDIS_URL: redis.url, HERALD_DRAIN_TIMEOUT_MS: String(DRAIN_MS), HERALD_JOB_LOCK_MS: String(JOB_LOCK_MS) }),
    });
    cleanups.push(() => gw.stop('SIGKILL'));

    tg.injectMessage({ chatId: 61, userId: 61, text: 'think for a long time' });
    await turnRunning;
    await redis.stop();
    await gw.waitForLog((l) => l.msg === 'redis error' && l.connection === 'main', 'the gateway to notice Redis is gone');

    const code = await gw.stop('SIGTERM');
    const logs = gw.logs();
    expect(logs.find(says('shutdown: the drain timeout'))?.msg, gw.output.slice(-25).join('\n')).toBe(
      'shutdown: the drain timeout (2000 ms) passed; cutting short 1 turn(s) of session(s) agent:main:telegram:dm:61: their messages stay queued and run again',
    );
    const abandoned = logs.find(says('shutdown: Redis is unreachable;'));
    expect(abandoned?.msg).toBe(
      'shutdown: Redis is unreachable; abandoned 1 job(s) of session(s) agent:main:telegram:dm:61 (1 turn(s) cut short at the drain timeout); ' +
        'once Redis is back, the queue redelivers them when their job lock expires (30 s)',
    );
    expect(abandoned?.abandoned).toEqual([{ jobId: expect.any(String), sessionKey: 'agent:main:telegram:dm:61' }]);
    // Nor did anything wait for a deadline: not the worker's hand-over grace (reason 'timeout', drain + 1 s), not
    // the close grace; only the parts that need Redis were left, because Redis is gone.
    expect(abandoned?.reason).toBe('redis');
    expectCleanExit(code, logs);
  });

  it('an idle worker does not wait for the drain at all: nothing was in hand, and it says so', async () => {
    const redis = await startTestRedis();
    cleanups.push(() => redis.stop());
    const gw = await startGateway({ env: { REDIS_URL: redis.url, HERALD_DRAIN_TIMEOUT_MS: '60000' } });
    cleanups.push(() => gw.stop('SIGKILL'));
    await gw.waitForLog(says('Herald all listening'), 'the end of start-up');
    await redis.stop();
    await gw.waitForLog((l) => l.msg === 'redis error' && l.connection === 'main', 'the gateway to notice Redis is gone');

    const code = await gw.stop('SIGTERM');
    const logs = gw.logs();
    // With a 60 s drain, exiting at all before the 63 s safety net shows nothing waited for the drain.
    expect(logs.find(says('shutdown: Redis is unreachable;'))?.msg).toBe('shutdown: Redis is unreachable; no job was in hand');
    expectCleanExit(code, logs);
  });
});

describe('SIGTERM while starting, with Redis gone', () => {
  it('ends the start-up steps that wait for Redis and exits 0', async () => {
    const redis = await startTestRedis();
    cleanups.push(() => redis.stop());
    const gw = await startGateway({ env: { REDIS_URL: redis.url, HERALD_DRAIN_TIMEOUT_MS: '60000' }, waitReady: false });
    cleanups.push(() => gw.stop('SIGKILL'));
    // Connected and checked, still starting: the queue worker and the heartbeat come after the admin routes.
    await gw.waitForLog(says('admin API and console off'), 'start-up to be under way');
    await redis.stop();
    const code = await gw.stop('SIGTERM');
    expectCleanExit(code, gw.logs());
  });
});

describe('SIGTERM with the database unreachable under a running turn', () => {
  it('cuts the turn short at the drain timeout, says so, hands the job back and exits 0', async () => {
    const schema = await freshPostgresSchema('herald_shutdown');
    cleanups.push(() => schema.drop());
    const target = new URL(TEST_DATABASE_URL);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const viaProxy = new URL(schema.url);
    viaProxy.port = String(proxy.port);
    const tg = await startTelegramFake();
    cleanups.push(() => tg.close());
    const { llm, started } = await modelThatHangsOn('a long answer please');
    const gw = await startGateway({
      env: telegramEnv(tg, llm, { HERALD_DATABASE_URL: viaProxy.toString(), HERALD_DRAIN_TIMEOUT_MS: String(DRAIN_MS) }),
    });
    cleanups.push(() => gw.stop('SIGKILL'));

    tg.injectMessage({ chatId: 62, userId: 62, text: 'a long answer please' });
    await started;
    await proxy.cut();

    const code = await gw.stop('SIGTERM');
    const logs = gw.logs();
    expect(logs.find(says('shutdown: the drain timeout'))?.msg).toBe(
      'shutdown: the drain timeout (2000 ms) passed; cutting short 1 turn(s) of session(s) agent:main:telegram:dm:62: their messages stay queued and run again',
    );
    expectCleanExit(code, logs);
  });
});
