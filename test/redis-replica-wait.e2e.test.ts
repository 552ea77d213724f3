/**
 * HERALD_REDIS_WAIT_REPLICAS=1 on a Redis that has no replica yet, then gets one: a message is acknowledged to its
 * platform only once a replica holds it. Telegram: the update stays unconfirmed (the ingress keeps trying) until
 * the replica appears, and the message is answered exactly once. The API: 503 "try again", and the copy it could
 * not confirm is taken back, never answered. The metric counts timeouts and confirmations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { lastUserText } from './helpers/llm-tags.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { metric } from './helpers/metrics.js';
import { waitFor } from './helpers/ports.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

const KEY = 'sk-herald-replica-wait-test';
// A replica writes the copy it syncs to disk: into a temp dir, not the working directory.
const dir = mkdtempSync(join(tmpdir(), 'herald-replica-wait-e2e-'));

describe('appends wait for a replica before a message is acknowledged', () => {
  let primary: TestRedis;
  let replica: TestRedis | undefined;
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    primary = await startTestRedis();
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    const env = { REDIS_URL: primary.url, HERALD_REDIS_WAIT_REPLICAS: '1', HERALD_REDIS_WAIT_TIMEOUT_MS: '100', HERALD_API_KEYS: KEY };
    gw = await startGateway({ env: telegramEnv(tg, llm, env) });
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await tg?.close();
    await replica?.stop();
    await primary?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('no replica: Telegram keeps the update, the API says 503 and its copy is never answered; a replica arrives: confirmed, answered once', async () => {
    const update = tg.injectMessage({ chatId: 91, userId: 91, text: 'held until a replica has it' });
    // Answered (the entry and its job are in Redis) but not confirmed to Telegram: no replica has it.
    await waitFor(() => repliesIn(tg, 91).length >= 1, { timeoutMs: 60_000, what: 'the answer' });
    await waitFor(async () => ((await metric(gw, 'herald_redis_replica_waits_total', { outcome: 'timeout' })) ?? 0) >= 2, { what: 'WAIT timeouts' });
    expect(tg.world.updates.map((u) => u.update_id)).toContain(update.update_id);

    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'herald', messages: [{ role: 'user', content: 'api message without a replica' }] }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).not.toBeNull();

    replica = await startTestRedis({ args: ['--dir', dir, '--replicaof', '127.0.0.1', String(primary.port)] });
    // Once the replica has it, the hand-over succeeds and the update is confirmed (Telegram drops it).
    await waitFor(() => !tg.world.updates.some((u) => u.update_id === update.update_id), { timeoutMs: 90_000, what: 'the update to be confirmed' });
    expect(((await metric(gw, 'herald_redis_replica_waits_total', { outcome: 'confirmed' })) ?? 0) >= 1).toBe(true);

    // A later message in the chat is answered after every earlier one was decided: no second answer came.
    tg.injectMessage({ chatId: 91, userId: 91, text: 'after the replica' });
    await waitFor(() => repliesIn(tg, 91).length >= 2, { timeoutMs: 60_000, what: 'the later answer' });
    expect(repliesIn(tg, 91)).toEqual(['ok: held until a replica has it', 'ok: after the replica']);

    // The API's copy was withdrawn: its mailbox empties without a model request for it.
    const redis = new Redis(primary.url);
    try {
      await waitFor(async () => (await redis.keys('*:mbox:*')).length === 0, { timeoutMs: 60_000, what: 'every mailbox drained' });
    } finally {
      redis.disconnect();
    }
    expect(llm.requests.filter((r) => lastUserText(r) === 'api message without a replica')).toEqual([]);
  });
});
