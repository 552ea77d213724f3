/**
 * Issue 52 part 2 for the platforms that redeliver: with HERALD_REDIS_WAIT_REPLICAS=1, Slack (Events over HTTP and
 * Socket Mode) and the Telegram webhook are acknowledged only once the message's mailbox append is on a replica.
 * With the replica attached, the acknowledgement comes after a confirmed WAIT; with the replica stopped, the WAIT
 * times out and the platform is not acknowledged, so its stand-in sends the message again; once the replica is
 * back, a redelivery is acknowledged and the message is answered exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAKEN_LATE_NOTICE } from '../packages/adapters/src/slack/command-gate.js';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startWhatsAppFake, type WhatsAppFake } from './fakes/whatsapp/index.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { metric } from './helpers/metrics.js';
import { freePort, waitFor } from './helpers/ports.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';
import { slackEnv, slackRepliesIn, type SlackTransportKind } from './helpers/slack.js';
import { whatsappEnv, whatsappTexts } from './helpers/whatsapp.js';

/** WAIT gives up quickly, so a stopped replica shows as timeouts within a test's patience. */
const WAIT_ENV = { HERALD_REDIS_WAIT_REPLICAS: '1', HERALD_REDIS_WAIT_TIMEOUT_MS: '200' };

/** A primary and a replica of it (its copy in a temp dir), started and in sync. */
class ReplicatedRedis {
  /** Made in start(), not when the suite is collected: a filtered run (`-t`) never starts a skipped suite. */
  dir: string | undefined;
  primary!: TestRedis;
  replica!: TestRedis;

  async start(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'herald-replica-ack-e2e-'));
    this.primary = await startTestRedis();
    this.replica = await startTestRedis({ args: ['--dir', this.dir, '--replicaof', '127.0.0.1', String(this.primary.port)] });
    await this.inSync();
  }

  /** Resolves once the primary counts the replica as online (WAIT can be confirmed). */
  async inSync(): Promise<void> {
    const redis = new Redis(this.primary.url);
    try {
      await waitFor(async () => /slave0:.*state=online/.test(await redis.info('replication')), { timeoutMs: 30_000, what: 'the replica in sync' });
    } finally {
      redis.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.replica?.stop();
    await this.primary?.stop();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}

const waits = async (gw: GatewayProcess, outcome: 'confirmed' | 'timeout'): Promise<number> =>
  (await metric(gw, 'herald_redis_replica_waits_total', { outcome })) ?? 0;

describe.each<SlackTransportKind>(['http', 'socket'])('Slack over %s is acknowledged only after the replica WAIT', (transport) => {
  const redis = new ReplicatedRedis();
  let slack: SlackFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    await redis.start();
    // Socket Mode: Slack redelivers an envelope not acked within 3 s, many times here so the outage fits.
    slack = await startSlackFake({ ackTimeoutMs: 3_000, maxRedeliveries: 60 });
    llm = await startFakeOpenAI();
    gw = await startGateway({ env: slackEnv(slack, llm, transport, { REDIS_URL: redis.primary.url, ...WAIT_ENV }) });
    await gw.waitForLog((l) => l.msg === 'slack: ingress started', 'the Slack ingress');
    if (transport === 'http') slack.setEventsUrl(`${gw.url}/slack/events`);
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await slack?.close();
    await redis.stop();
  });

  /** Waits for Slack's acknowledgement of a delivery: the 200 (HTTP), or the envelope's ack (Socket Mode). */
  async function acked(d: { responses: { status: number }[]; envelopeIds: string[] }): Promise<boolean> {
    if (transport === 'http') return d.responses[0].status === 200;
    await slack.socket.waitFor(() => slack.socket.isAcked(d.envelopeIds[0]), 20_000, 'the envelope ack');
    return true;
  }

  it('with the replica in sync, the acknowledgement comes after a confirmed WAIT', async () => {
    const before = await waits(gw, 'confirmed');
    const user = `U52OK${transport.toUpperCase()}`;
    const d = await slack.dm({ user, text: 'kept on a replica' });
    expect(await acked(d)).toBe(true);
    // The WAIT's outcome is counted before the hand-over returns, and the ack only follows the hand-over.
    expect(await waits(gw, 'confirmed')).toBeGreaterThan(before);
    await waitFor(() => slackRepliesIn(slack, slack.dmChannel(user)).length === 1, { timeoutMs: 60_000, what: 'the answer' });
  });

  it('with the replica stopped, no acknowledgement; Slack retries; once the replica is back a retry is acknowledged, answered once', async () => {
    const user = `U52DOWN${transport.toUpperCase()}`;
    const dm = slack.dmChannel(user);
    const timeoutsBefore = await waits(gw, 'timeout');
    await redis.replica.stop();
    const d = await slack.dm({ user, text: 'not acknowledged yet' });
    const body = d.bodies[0];
    let retries = 0;
    if (transport === 'http') {
      expect(d.responses[0].status).toBe(503);
      // Slack retries what it got no 2xx for, with X-Slack-Retry-Num: the same event_id.
      const retry = await slack.redeliver(body, ++retries);
      expect(retry.responses[0].status).toBe(503);
    } else {
      const envelope = d.envelopeIds[0];
      await slack.socket.waitFor(() => slack.socket.delivered.some((e) => e.envelope_id === envelope && e.retry_attempt >= 1), 20_000, 'a redelivery');
      expect(slack.socket.isAcked(envelope)).toBe(false);
    }
    expect(await waits(gw, 'timeout')).toBeGreaterThan(timeoutsBefore);

    await redis.replica.start();
    await redis.inSync();
    if (transport === 'http') {
      await waitFor(async () => (await slack.redeliver(body, ++retries)).responses[0].status === 200, {
        timeoutMs: 90_000,
        intervalMs: 1_000,
        what: 'a retry acknowledged',
      });
      // A further retry of the acknowledged event is a duplicate: acknowledged, not taken again.
      expect((await slack.redeliver(body, ++retries)).responses[0].status).toBe(200);
    } else {
      const envelope = d.envelopeIds[0];
      await slack.socket.waitFor(() => slack.socket.isAcked(envelope), 90_000, 'the redelivery acked');
      expect(slack.socket.acks.filter((a) => a.envelopeId === envelope)).toHaveLength(1);
    }

    // A later message is answered after the earlier one was decided: the retries made no second answer.
    await slack.dm({ user, text: 'after the replica' });
    await waitFor(() => slackRepliesIn(slack, dm).length >= 2, { timeoutMs: 60_000, what: 'both answers' });
    expect(slackRepliesIn(slack, dm)).toEqual(['ok: not acknowledged yet', 'ok: after the replica']);
  });

  it('a slash command that queues: acknowledged after the WAIT; with the replica stopped, not acknowledged, the user told once it is taken, answered once', async () => {
    const user = `U52CMD${transport.toUpperCase()}`;
    const dm = slack.dmChannel(user);
    const confirmed = await waits(gw, 'confirmed');
    const ok = await slack.slashCommand({ user, text: 'queue queued on a replica' });
    if (transport === 'http') expect(ok.response?.status).toBe(200);
    else await slack.socket.waitFor(() => slack.socket.isAcked(ok.envelopeId as string), 20_000, 'the command acked');
    expect(await waits(gw, 'confirmed')).toBeGreaterThan(confirmed);
    await waitFor(() => slackRepliesIn(slack, dm).length === 1, { timeoutMs: 60_000, what: 'the answer' });

    await redis.replica.stop();
    const timeouts = await waits(gw, 'timeout');
    const held = await slack.slashCommand({ user, text: 'queue held until a replica has it' });
    if (transport === 'http') expect(held.response?.status).toBe(503);
    await gw.waitForLog((l) => l.msg === 'slack: slash command not acknowledged (its message is not handed over yet)', 'the command refused');
    expect(slack.socket.isAcked(held.envelopeId ?? '')).toBe(false);
    expect(await waits(gw, 'timeout')).toBeGreaterThan(timeouts);
    expect(slack.ephemerals.filter((e) => e.user === user)).toEqual([]);

    await redis.replica.start();
    await redis.inSync();
    await waitFor(() => slack.ephemerals.some((e) => e.user === user), { timeoutMs: 90_000, what: 'the user told' });
    expect(slack.ephemerals.filter((e) => e.user === user).map((e) => e.text)).toEqual([TAKEN_LATE_NOTICE]);
    // Nothing queued twice: a later message is answered after the held one, each once.
    await slack.dm({ user, text: 'after the command' });
    await waitFor(() => slackRepliesIn(slack, dm).length >= 3, { timeoutMs: 60_000, what: 'all answers' });
    expect(slackRepliesIn(slack, dm)).toEqual(['ok: queued on a replica', 'ok: held until a replica has it', 'ok: after the command']);
  }, 180_000);
});

describe('the Telegram webhook is answered 2xx only after the replica WAIT', () => {
  const redis = new ReplicatedRedis();
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    await redis.start();
    // Telegram resends an update until it gets a 2xx; often enough here for the outage to fit.
    tg = await startTelegramFake({ webhookRetryMs: 200, webhookMaxAttempts: 1_000 });
    llm = await startFakeOpenAI();
    const port = await freePort();
    const env = telegramEnv(tg, llm, {
      REDIS_URL: redis.primary.url,
      ...WAIT_ENV,
      HERALD_PORT: String(port),
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram/webhook`,
      TELEGRAM_WEBHOOK_SECRET: 'replica-wait-secret',
    });
    gw = await startGateway({ env });
    await gw.waitForLog((l) => l.msg === 'telegram webhook set', 'the webhook set');
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await tg?.close();
    await redis.stop();
  });

  const statusesOf = (updateId: unknown): (number | string)[] => tg.webhookDeliveries.filter((d) => d.update_id === updateId).map((d) => d.status);

  it('with the replica in sync: 200 after a confirmed WAIT', async () => {
    const before = await waits(gw, 'confirmed');
    const update = tg.injectMessage({ chatId: 521, userId: 521, text: 'webhook kept on a replica' });
    await waitFor(() => statusesOf(update.update_id).length >= 1, { timeoutMs: 30_000, what: 'the webhook answer' });
    expect(statusesOf(update.update_id)).toEqual([200]);
    expect(await waits(gw, 'confirmed')).toBeGreaterThan(before);
    await waitFor(() => repliesIn(tg, 521).length === 1, { timeoutMs: 60_000, what: 'the answer' });
  });

  it('with the replica stopped: non-2xx, Telegram resends; the replica back: 200, answered exactly once', async () => {
    const timeoutsBefore = await waits(gw, 'timeout');
    await redis.replica.stop();
    const update = tg.injectMessage({ chatId: 522, userId: 522, text: 'webhook held until a replica has it' });
    await waitFor(() => statusesOf(update.update_id).length >= 2, { timeoutMs: 60_000, what: 'a refused delivery and a resend' });
    expect(statusesOf(update.update_id).slice(0, 2)).toEqual([503, 503]);
    expect(await waits(gw, 'timeout')).toBeGreaterThan(timeoutsBefore);

    await redis.replica.start();
    await redis.inSync();
    await waitFor(() => statusesOf(update.update_id).includes(200), { timeoutMs: 90_000, what: 'the resend answered 200' });
    expect(statusesOf(update.update_id).filter((s) => s !== 503)).toEqual([200]);

    tg.injectMessage({ chatId: 522, userId: 522, text: 'webhook after the replica' });
    await waitFor(() => repliesIn(tg, 522).length >= 2, { timeoutMs: 60_000, what: 'both answers' });
    expect(repliesIn(tg, 522)).toEqual(['ok: webhook held until a replica has it', 'ok: webhook after the replica']);
  });
});

describe('the WhatsApp webhook is answered 2xx only after the replica WAIT, and within a bounded time', () => {
  const redis = new ReplicatedRedis();
  let wa: WhatsAppFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    await redis.start();
    wa = await startWhatsAppFake();
    llm = await startFakeOpenAI();
    gw = await startGateway({ env: whatsappEnv(wa, llm, { REDIS_URL: redis.primary.url, ...WAIT_ENV }) });
    await gw.waitForLog((l) => l.msg === 'whatsapp number ready for webhooks', 'the WhatsApp ingress');
    wa.setWebhookUrl(`${gw.url}/whatsapp/webhook`);
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await wa?.close();
    await redis.stop();
  });

  it('with the replica stopped: 503 (Meta redelivers), the redelivery joins; the replica back: 200, answered exactly once', async () => {
    const from = '15550005252';
    const ok = await wa.text('whatsapp kept on a replica', { from });
    expect(ok.status).toBe(200);
    await waitFor(() => whatsappTexts(wa, from).length === 1, { timeoutMs: 60_000, what: 'the first answer' });

    const timeouts = await waits(gw, 'timeout');
    await redis.replica.stop();
    const id = 'wamid.HELD52';
    // Meta's delivery and its redelivery of the same message: neither is confirmed while no replica has it.
    expect((await wa.text('whatsapp held until a replica has it', { from, id })).status).toBe(503);
    expect((await wa.text('whatsapp held until a replica has it', { from, id })).status).toBe(503);
    expect(await waits(gw, 'timeout')).toBeGreaterThan(timeouts);

    await redis.replica.start();
    await redis.inSync();
    await waitFor(async () => (await wa.text('whatsapp held until a replica has it', { from, id })).status === 200, {
      timeoutMs: 90_000,
      intervalMs: 1_000,
      what: 'a redelivery answered 200',
    });
    await wa.text('whatsapp after the replica', { from });
    await waitFor(() => whatsappTexts(wa, from).length >= 3, { timeoutMs: 60_000, what: 'all answers' });
    expect(whatsappTexts(wa, from)).toEqual(['ok: whatsapp kept on a replica', 'ok: whatsapp held until a replica has it', 'ok: whatsapp after the replica']);
  }, 180_000);
});
