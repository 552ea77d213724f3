import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, waitFor, type SlackFake } from '../../../../test/fakes/slack/index.js';
import { AuthError } from '../errors.js';
import type { InboundMessage } from '../types.js';
import { createSlackIngress, type SlackIngress } from './ingress.js';

const logger = pino({ level: 'silent' });

let fake: SlackFake;
let ingress: SlackIngress;
let threads: Set<string>;
let received: InboundMessage[];

function makeIngress(appToken: string): SlackIngress {
  return createSlackIngress({
    botToken: fake.botToken,
    appToken,
    apiUrl: fake.apiUrl,
    threads,
    logger,
    clientOptions: { retryConfig: { retries: 0 } },
    // Short timeouts: the SDK waits clientPingTimeout before reconnecting after a drop.
    socketMode: { clientPingTimeoutMs: 1_000, reconnectRetryMs: 200 },
  });
}

beforeEach(async () => {
  fake = await startSlackFake({ ackTimeoutMs: 2_000 });
  threads = new Set();
  received = [];
  ingress = makeIngress(fake.appToken);
});

afterEach(async () => {
  await ingress.stop();
  await fake.close();
});

async function start(): Promise<void> {
  await ingress.start(async (m) => {
    received.push(m);
  });
}

describe('Slack ingress over Socket Mode', () => {
  it('connects with the app token and hands over a DM, acking the envelope', async () => {
    await start();
    expect(ingress.health()).toMatchObject({ state: 'connected', transport: 'socket', reconnects: 0 });
    expect(fake.calls.filter((c) => c.method === 'apps.connections.open').map((c) => c.token)).toEqual([fake.appToken]);

    const d = await fake.dm({ user: 'U0ALICE', text: 'hello' });
    await waitFor(() => received.length === 1);
    expect(received[0]).toMatchObject({ conversationId: `slack:${d.channel}`, chatType: 'dm', text: 'hello', userId: 'U0ALICE' });
    await fake.socket.waitFor(() => fake.socket.isAcked(d.envelopeIds[0]), 5_000, 'the ack');
    expect(ingress.health().lastEventAt).not.toBeNull();
  });

  it('hands a redelivered event over once', async () => {
    await start();
    const d = await fake.dm({ user: 'U0ALICE', text: 'once' });
    const again = await fake.redeliver(d.bodies[0], 1);
    const next = await fake.dm({ user: 'U0ALICE', text: 'next' });
    await waitFor(() => received.some((m) => m.platformMessageId === next.ts));
    await fake.socket.waitFor(() => fake.socket.isAcked(again.envelopeIds[0]), 5_000, 'the redelivery ack');
    expect(received.map((m) => m.text)).toEqual(['once', 'next']);
  });

  it('leaves an event whose hand-over failed unacknowledged: Slack redelivers it, and the redelivery is handed over and acked', async () => {
    let fail = true;
    await ingress.start(async (m) => {
      if (fail) {
        fail = false;
        throw new Error('redis down');
      }
      received.push(m);
    });
    const d = await fake.dm({ user: 'U0ALICE', text: 'kept' });
    const id = d.envelopeIds[0];
    await fake.socket.waitFor(() => fake.socket.isAcked(id), 15_000, 'the redelivery to be acked');
    expect(fake.socket.delivered.filter((e) => e.envelope_id === id).map((e) => e.retry_attempt)).toEqual([0, 1]);
    expect(fake.socket.acks.filter((a) => a.envelopeId === id)).toHaveLength(1);
    expect(received.map((m) => m.text)).toEqual(['kept']);
  });

  it('a reply thread inside a DM is its own conversation', async () => {
    await start();
    const top = await fake.dm({ user: 'U0ALICE', text: 'top' });
    await fake.dm({ user: 'U0ALICE', text: 'in thread', threadTs: top.ts });
    await waitFor(() => received.length === 2);
    const inThread = received.find((m) => m.text === 'in thread');
    expect(inThread).toMatchObject({ conversationId: `slack:${top.channel}:${top.ts}`, chatType: 'dm', threadId: top.ts });
  });

  it('takes a channel mention once even though Slack sends message and app_mention', async () => {
    await start();
    const m = await fake.channelMessage({ channel: 'C0GENERAL', user: 'U0BOB', text: `hey <@${fake.botUserId}>` });
    expect(m.envelopeIds).toHaveLength(2);
    await fake.socket.waitFor(() => m.envelopeIds.every((id) => fake.socket.isAcked(id)), 5_000, 'both acks');
    const sentinel = await fake.dm({ user: 'U0ALICE', text: 'sentinel' });
    await waitFor(() => received.some((r) => r.platformMessageId === sentinel.ts));
    expect(received.filter((r) => r.chatId === 'C0GENERAL')).toEqual([
      expect.objectContaining({ conversationId: `slack:C0GENERAL:${m.ts}`, text: 'hey', chatType: 'thread' }),
    ]);
  });

  it('notices a dropped connection, reconnects (health shows it) and handles the next DM', async () => {
    await start();
    await fake.dm({ user: 'U0ALICE', text: 'before' });
    await waitFor(() => received.length === 1);

    fake.socket.drop();
    await waitFor(() => ingress.health().state !== 'connected', 5_000, 'the drop to show');
    expect(ingress.health().error).toMatch(/connection lost/);
    await waitFor(() => ingress.health().state === 'connected', 10_000, 'the reconnect');
    expect(ingress.health().reconnects).toBe(1);
    expect(fake.socket.totalConnections).toBe(2);

    await fake.dm({ user: 'U0ALICE', text: 'after' });
    await waitFor(() => received.length === 2);
    expect(received.map((m) => m.text)).toEqual(['before', 'after']);
  });

  it('reconnects when Slack asks it to (disconnect: refresh_requested)', async () => {
    await start();
    fake.socket.disconnect('refresh_requested');
    await fake.socket.waitFor(() => fake.socket.totalConnections === 2 && fake.socket.openConnections === 1, 10_000, 'a new connection');
    await waitFor(() => ingress.health().state === 'connected' && ingress.health().reconnects === 1, 5_000, 'health');
    await fake.dm({ user: 'U0ALICE', text: 'still here' });
    await waitFor(() => received.length === 1);
  });

  it('keeps trying when the Slack API is unreachable during a reconnect', async () => {
    await start();
    await fake.stop(); // connections cut, API down
    await waitFor(() => ingress.health().state === 'disconnected', 10_000, 'the failed reconnect to show');
    expect(ingress.health().error).toMatch(/fetch failed|ECONNREFUSED|request/i);
    await fake.restart();
    await waitFor(() => ingress.health().state === 'connected', 10_000, 'the reconnect');
    await fake.dm({ user: 'U0ALICE', text: 'back' });
    await waitFor(() => received.length === 1);
  });

  it('fails start with AuthError and a fatal state on a wrong app token', async () => {
    ingress = makeIngress('xapp-1-wrong');
    const err = await ingress.start(async () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect(ingress.health().state).toBe('fatal');
    expect(ingress.health().error).toMatch(/invalid_auth/);
  });

  it('fails start with AuthError on a wrong bot token', async () => {
    ingress = createSlackIngress({ botToken: 'xoxb-wrong', appToken: fake.appToken, apiUrl: fake.apiUrl, threads, logger });
    await expect(ingress.start(async () => {})).rejects.toBeInstanceOf(AuthError);
    expect(ingress.health().state).toBe('fatal');
  });
});
