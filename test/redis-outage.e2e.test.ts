/**
 * Redis goes away under running processes and comes back: the ingress and the worker reconnect on their own
 * (BullMQ connections, the control subscriber, the Lua scripts re-loaded after the restart) and answer again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { waitFor } from './helpers/ports.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

describe('a Redis restart under a running ingress and worker', () => {
  let redis: TestRedis;
  let tg: TelegramFake;
  let llm: FakeLLM;
  let cluster: Cluster;

  beforeAll(async () => {
    redis = await startTestRedis();
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    cluster = await startCluster({ workers: 1, env: telegramEnv(tg, llm, { REDIS_URL: redis.url }) });
  });
  afterAll(async () => {
    await cluster?.stop();
    await llm?.close();
    await tg?.close();
    await redis?.stop();
  });

  it('answers before, after, and what was sent while Redis was down for a few seconds', async () => {
    tg.injectMessage({ chatId: 71, userId: 71, text: 'before the outage' });
    await waitFor(() => repliesIn(tg, 71).length >= 1, { timeoutMs: 20_000, what: 'the first reply' });

    await redis.stop();
    // Sent while Redis is away: the ingress cannot hand it over yet, keeps the update unconfirmed and retries.
    const during = tg.injectMessage({ chatId: 72, userId: 72, text: 'during the outage' });
    // Restart only once the ingress has read it from Telegram while Redis was away.
    await waitFor(() => tg.handedOut.has(Number(during.update_id)), { what: 'the ingress to read the message sent during the outage' });
    await redis.start();

    // The server came back empty (no persistence in this test): everything must be re-created on the fly.
    tg.injectMessage({ chatId: 71, userId: 71, text: 'after the outage' });
    await waitFor(() => repliesIn(tg, 71).length >= 2, { timeoutMs: 45_000, what: 'the reply after Redis returned' });
    expect(repliesIn(tg, 71)).toEqual(['ok: before the outage', 'ok: after the outage']);
    await waitFor(() => repliesIn(tg, 72).length >= 1, { timeoutMs: 45_000, what: 'the reply to the message sent during the outage' });
    expect(repliesIn(tg, 72)).toEqual(['ok: during the outage']);
    expect(cluster.ingress.proc.exitCode).toBeNull();
    expect(cluster.workers[0].proc.exitCode).toBeNull();
  });
});
