import { fastify, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, waitFor, type SlackFake } from '../../../../test/fakes/slack/index.js';
import type { InboundMessage } from '../types.js';
import { createSlackIngress, type SlackIngress } from './ingress.js';

const logger = pino({ level: 'silent' });

let fake: SlackFake;
let server: FastifyInstance;
let ingress: SlackIngress;
let threads: Set<string>;
/** Thread lookups wait for this (a slow database), so a test can hold one message in its preparation. */
let threadLookup: Promise<void>;
let received: InboundMessage[];
let handler: (m: InboundMessage) => Promise<void>;

beforeEach(async () => {
  fake = await startSlackFake();
  threads = new Set();
  threadLookup = Promise.resolve();
  received = [];
  handler = async (m) => {
    received.push(m);
  };
  ingress = createSlackIngress({
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    threads: {
      has: async (id) => {
        await threadLookup;
        return threads.has(id);
      },
      add: async (id) => void threads.add(id),
    },
    logger,
    clientOptions: { retryConfig: { retries: 0 } },
  });
  server = fastify();
  ingress.registerRoutes(server);
  await server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = server.server.address() as { port: number };
  fake.setEventsUrl(`http://127.0.0.1:${port}/slack/events`);
  await ingress.start((m) => handler(m));
});

afterEach(async () => {
  await ingress.stop();
  await server.close();
  await fake.close();
});

/** A DM that must arrive: everything posted before it has been through the middleware by then. */
async function barrier(): Promise<void> {
  const before = received.length;
  const d = await fake.dm({ user: 'U0BARRIER', text: 'barrier' });
  await waitFor(() => received.some((m) => m.platformMessageId === d.ts), 5_000, 'the barrier DM');
  received.splice(before);
}

describe('Slack ingress over Events HTTP', () => {
  it('hands over a DM as an InboundMessage, and a retried delivery only once', async () => {
    const d = await fake.dm({ user: 'U0ALICE', text: 'hello' });
    expect(d.responses.map((r) => r.status)).toEqual([200]);
    await waitFor(() => received.length === 1);
    expect(received[0]).toEqual({
      platform: 'slack',
      messageId: `${d.channel}:${d.ts}`,
      conversationId: `slack:${d.channel}`,
      chatType: 'dm',
      chatId: d.channel,
      userId: 'U0ALICE',
      text: 'hello',
      attachments: [],
      platformMessageId: d.ts,
      sentAt: Math.round(Number(d.ts) * 1000),
      spaceId: 'T0HERALD1', // the workspace: routes pick agent profiles by it
    });
    expect(JSON.parse(JSON.stringify(received[0]))).toEqual(received[0]); // survives Redis

    const retry = await fake.redeliver(d.bodies[0], 1);
    expect(retry.responses[0].status).toBe(200);
    await barrier();
    expect(received).toHaveLength(1);
  });

  it('answers 401 to a forged signature and hands nothing over', async () => {
    const d = await fake.deliver(
      { type: 'message', channel: 'D0EVE', channel_type: 'im', user: 'U0EVE', text: 'let me in', ts: '1700000000.000001' },
      { forgeSignature: true },
    );
    expect(d.responses[0].status).toBe(401);
    await barrier();
    expect(received).toHaveLength(0);
  });

  it('answers 401 to a 10-minute-old request (replay)', async () => {
    const d = await fake.deliver(
      { type: 'message', channel: 'D0EVE', channel_type: 'im', user: 'U0EVE', text: 'replayed', ts: '1700000000.000002' },
      { timestampSec: Math.floor(Date.now() / 1000) - 600 },
    );
    expect(d.responses[0].status).toBe(401);
    await barrier();
    expect(received).toHaveLength(0);
  });

  it('answers url_verification with the challenge', async () => {
    const res = await fake.urlVerification('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  });

  it('answers 400, not 500, to correctly signed payloads of the wrong shape, and hands nothing over', async () => {
    const envelope = { type: 'event_callback', team_id: fake.teamId, event_id: 'Ev0SHAPE' };
    const malformed: unknown[] = [
      [1, 2],
      { type: 'url_verification', challenge: { a: 1 } },
      { ...envelope, event: 'message' },
      { ...envelope, event: null },
      // Shapes only Bolt reads: found by the fuzz suite (test/fuzz/slack.e2e.test.ts).
      { ...envelope, event: { type: 'message', user: null, channel: 'D0X', ts: '1.1', text: 'hi' } },
      { ...envelope, event: { type: 'message', channel: 5, ts: '1.2', text: 'hi' } },
      { type: 'view_submission', view: 'not a view' },
      { type: 'shortcut' },
    ];
    for (const body of malformed) expect((await fake.post(body)).status, JSON.stringify(body)).toBe(400);
    await barrier();
    expect(received).toEqual([]);
  });

  it('takes a channel mention once (message + app_mention), then follow-ups in its thread; ignores the rest', async () => {
    const mention = await fake.channelMessage({ channel: 'C0GENERAL', user: 'U0BOB', text: `<@${fake.botUserId}> what is up?` });
    expect(mention.bodies.map((b) => (b.event as { type: string }).type)).toEqual(['message', 'app_mention']);
    expect(mention.responses.map((r) => r.status)).toEqual([200, 200]);
    await barrier();
    const conversationId = `slack:C0GENERAL:${mention.ts}`;
    expect(received).toEqual([expect.objectContaining({ conversationId, chatType: 'thread', threadId: mention.ts, text: 'what is up?', userId: 'U0BOB' })]);
    expect(threads.has(conversationId)).toBe(true);
    received.length = 0;

    // Someone else follows up in the thread without mentioning the bot: shared thread conversation.
    const followUp = await fake.channelMessage({ channel: 'C0GENERAL', user: 'U0CAROL', text: 'and also this', threadTs: mention.ts });
    // Chatter outside any thread the bot is in.
    await fake.channelMessage({ channel: 'C0GENERAL', user: 'U0BOB', text: 'just chatting' });
    await fake.channelMessage({ channel: 'C0GENERAL', user: 'U0BOB', text: 'other thread', threadTs: '1600000000.000100' });
    await barrier();
    expect(received).toEqual([
      expect.objectContaining({ conversationId, chatType: 'thread', text: 'and also this', userId: 'U0CAROL', platformMessageId: followUp.ts }),
    ]);
  });

  it("hands a thread's messages over in arrival order, even when the first one waits for its thread lookup", async () => {
    const mention = await fake.channelMessage({ channel: 'C0ORDER', user: 'U0BOB', text: `<@${fake.botUserId}> start` });
    await waitFor(() => received.length === 1);
    received.length = 0;
    let lookupDone!: () => void;
    threadLookup = new Promise<void>((resolve) => (lookupDone = resolve));
    // First: a follow-up without a mention, which needs the (slow) thread lookup. Then: a mention, which needs none.
    await fake.channelMessage({ channel: 'C0ORDER', user: 'U0CAROL', text: 'first', threadTs: mention.ts });
    await fake.channelMessage({ channel: 'C0ORDER', user: 'U0CAROL', text: `<@${fake.botUserId}> second`, threadTs: mention.ts });
    await barrier();
    lookupDone();
    await waitFor(() => received.length === 2);
    expect(received.map((m) => m.text)).toEqual(['first', 'second']);
  });

  it('ignores bot messages and edits', async () => {
    const ts = '1700000000.000300';
    await fake.deliver({ type: 'message', subtype: 'bot_message', bot_id: 'B0OTHER', channel: 'D0ALICE', channel_type: 'im', text: 'beep', ts });
    await fake.deliver({ type: 'message', bot_id: fake.botId, user: fake.botUserId, channel: 'D0ALICE', channel_type: 'im', text: 'my own reply', ts });
    await fake.deliver({
      type: 'message',
      subtype: 'message_changed',
      channel: 'D0ALICE',
      channel_type: 'im',
      ts,
      message: { type: 'message', user: 'U0ALICE', text: 'edited', ts: '1700000000.000200' },
      previous_message: { type: 'message', user: 'U0ALICE', text: 'orig', ts: '1700000000.000200' },
    });
    await fake.deliver({ type: 'message', subtype: 'message_deleted', channel: 'D0ALICE', channel_type: 'im', ts, deleted_ts: '1700000000.000200' });
    await barrier();
    expect(received).toHaveLength(0);
  });

  // The contract changed with issue 52: an event used to be acknowledged on arrival (Bolt's own ack), so a message
  // the gateway then failed to take was lost. Now the 200 waits for the hand-over, and a retry joins it.
  it('acknowledges only once the gateway has taken the message: a retry joins a running hand-over, and hands a failed one over again', async () => {
    let release: () => void = () => {};
    handler = (m) => {
      received.push(m);
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    };
    const slow = await fake.dm({ user: 'U0ALICE', text: 'slow' });
    expect(slow.responses[0].status).toBe(503); // the hand-over outlived Slack's budget: not acknowledged
    const firstSeenAt = ingress.health().lastEventAt;
    const retry = fake.redeliver(slow.bodies[0], 1);
    await waitFor(() => ingress.health().lastEventAt !== firstSeenAt, 5_000, 'the retry to reach the ingress');
    release();
    expect((await retry).responses[0].status).toBe(200); // the retry got the running hand-over's outcome
    expect(received.map((m) => m.text)).toEqual(['slow']); // handed over once

    handler = async () => {
      throw new Error('redis down');
    };
    const failed = await fake.dm({ user: 'U0ALICE', text: 'not lost' });
    expect(failed.responses[0].status).toBe(503);
    expect(ingress.health()).toMatchObject({ state: 'connected', transport: 'http', error: expect.stringMatching(/redis down/) });
    handler = async (m) => {
      received.push(m);
    };
    const again = await fake.redeliver(failed.bodies[0], 1);
    expect(again.responses[0].status).toBe(200);
    expect(received.map((m) => m.text)).toEqual(['slow', 'not lost']);
    expect(ingress.health().lastEventAt).toBeGreaterThan(Date.now() - 10_000);
  });

  it('asks Slack to retry (503) while not started', async () => {
    await ingress.stop();
    const d = await fake.dm({ user: 'U0ALICE', text: 'too early' });
    expect(d.responses[0].status).toBe(503);
    expect(received).toHaveLength(0);
  });
});
