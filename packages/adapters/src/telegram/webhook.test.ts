/** Webhook ingress: the stand-in posts updates to a real fastify server carrying the adapter's route. */
import fastify, { type FastifyInstance } from 'fastify';
import { createServer, type AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTelegramFake, type TelegramFake } from '../../../../test/fakes/telegram/index.js';
import type { InboundMessage } from '../types.js';
import { TelegramIngress } from './ingress.js';
import { FAST_WAITS, silentLogger } from './test-support.js';

const SECRET = 'right-secret_123';
const PATH = '/telegram/webhook';

let fake: TelegramFake;
let app: FastifyInstance;
let ingress: TelegramIngress;
let received: InboundMessage[];
let failNextHandover: boolean;

/** A free port for the gateway: its public URL must be known before the route is mounted and the server listens. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeEach(async () => {
  fake = await startTelegramFake({ webhookRetryMs: 10 });
  received = [];
  failNextHandover = false;
  const port = await freePort();
  ingress = new TelegramIngress({
    token: fake.token,
    apiRoot: fake.apiRoot,
    logger: silentLogger,
    webhook: { url: `http://127.0.0.1:${port}${PATH}`, secret: SECRET },
    waits: FAST_WAITS,
  });
  app = fastify();
  ingress.registerRoutes(app);
  await app.listen({ port, host: '127.0.0.1' });
});

afterEach(async () => {
  await ingress.stop();
  await app.close();
  await fake.close();
});

async function startWithRoutes(): Promise<void> {
  await ingress.start(async (m) => {
    if (failNextHandover) {
      failNextHandover = false;
      throw new Error('queue unavailable');
    }
    received.push(m);
  });
}

describe('telegram webhook ingress', () => {
  it('sets the webhook with its secret and receives updates through it', async () => {
    await startWithRoutes();
    expect(fake.webhook).toMatchObject({ url: expect.stringMatching(new RegExp(`${PATH}$`)), secret_token: SECRET });
    expect(ingress.health().state).toBe('connected');
    fake.injectMessage({ chatId: 777, userId: 777, text: 'via webhook' });
    await fake.waitFor(() => received.length === 1);
    expect(received[0]).toMatchObject({ conversationId: 'telegram:777', text: 'via webhook' });
    await fake.waitFor(() => fake.webhookDeliveries.length === 1);
    expect(fake.webhookDeliveries.map((d) => d.status)).toEqual([200]);
  });

  it('answers 401 to a wrong or missing secret and never calls the handler', async () => {
    await startWithRoutes();
    const update = { update_id: 1, message: { message_id: 1, date: 1, chat: { id: 777, type: 'private' }, from: { id: 777 }, text: 'forged' } };
    const wrong = await app.inject({
      method: 'POST',
      url: PATH,
      headers: { 'x-telegram-bot-api-secret-token': 'not-the-secret' },
      payload: update,
    });
    const missing = await app.inject({ method: 'POST', url: PATH, payload: update });
    const garbage = await app.inject({
      method: 'POST',
      url: PATH,
      headers: { 'content-type': 'application/json' },
      payload: '{"not json',
    });
    expect(wrong.statusCode).toBe(401);
    expect(missing.statusCode).toBe(401);
    expect(garbage.statusCode).toBe(401); // the secret is checked before the body is read
    // A genuine update afterwards is the first and only one the handler gets.
    fake.injectMessage({ chatId: 777, userId: 777, text: 'genuine' });
    await fake.waitFor(() => received.length > 0);
    expect(received.map((m) => m.text)).toEqual(['genuine']);
  });

  it('answers 500 when the gateway could not take the update, so Telegram delivers it again', async () => {
    await startWithRoutes();
    failNextHandover = true;
    fake.injectMessage({ chatId: 777, userId: 777, text: 'must not be lost' });
    await fake.waitFor(() => received.length === 1);
    expect(received[0].text).toBe('must not be lost');
    await fake.waitFor(() => fake.webhookDeliveries.length === 2);
    expect(fake.webhookDeliveries.map((d) => d.status)).toEqual([500, 200]);
  });

  it('hands a redelivered update over once', async () => {
    await startWithRoutes();
    const update = fake.injectMessage({ chatId: 777, userId: 777, text: 'just once' });
    await fake.waitFor(() => received.length === 1);
    fake.redeliver(update);
    await fake.waitFor(() => fake.webhookDeliveries.length === 2);
    expect(fake.webhookDeliveries.map((d) => d.status)).toEqual([200, 200]);
    expect(received.map((m) => m.text)).toEqual(['just once']);
  });

  it("answers a resend of an update still being handed over with that hand-over's outcome, not an early 200", async () => {
    // Telegram resends an update whose request timed out; the gateway may still be retrying the first one.
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const port = await freePort();
    const own = new TelegramIngress({
      token: fake.token,
      apiRoot: fake.apiRoot,
      logger,
      webhook: { url: `http://127.0.0.1:${port}${PATH}`, secret: SECRET },
      waits: FAST_WAITS,
    });
    const server = fastify();
    own.registerRoutes(server);
    await server.listen({ port, host: '127.0.0.1' });
    let handedIn!: () => void;
    const handing = new Promise<void>((resolve) => (handedIn = resolve));
    let giveUp!: (err: Error) => void;
    try {
      await own.start(
        () =>
          new Promise<void>((_, reject) => {
            giveUp = reject;
            handedIn();
          }),
      );
      const update = {
        update_id: 4242,
        message: { message_id: 9, date: 1, chat: { id: 777, type: 'private' }, from: { id: 777, is_bot: false, first_name: 'A' }, text: 'slow' },
      };
      const post = (): Promise<Response> =>
        fetch(`http://127.0.0.1:${port}${PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
          body: JSON.stringify(update),
        });
      const first = post();
      await handing;
      const resend = post();
      await fake.waitFor(() => lines.some((l) => l.includes('sent again while being handed over')));
      giveUp(new Error('the gateway gave up'));
      // Both say "not taken", so Telegram keeps the update and delivers it again.
      expect([(await first).status, (await resend).status]).toEqual([500, 500]);
    } finally {
      await own.stop();
      await server.close();
    }
  });

  it('answers 503 to a hand-over still running past its answer time; the resend joins it and gets the 200, handed over once', async () => {
    const port = await freePort();
    const own = new TelegramIngress({
      token: fake.token,
      apiRoot: fake.apiRoot,
      logger: silentLogger,
      webhook: { url: `http://127.0.0.1:${port}${PATH}`, secret: SECRET, answerWithinMs: 200 },
      waits: FAST_WAITS,
    });
    const server = fastify();
    own.registerRoutes(server);
    await server.listen({ port, host: '127.0.0.1' });
    let release!: () => void;
    const handed: string[] = [];
    try {
      await own.start((m) => {
        handed.push(m.text);
        return new Promise<void>((resolve) => (release = resolve));
      });
      const update = fake.injectMessage({ chatId: 778, userId: 778, text: 'held up' });
      // The first answers are 503 while the hand-over runs (the stand-in resends each time, as Telegram does).
      await fake.waitFor(() => fake.webhookDeliveries.filter((d) => d.update_id === update.update_id).length >= 2);
      release();
      await fake.waitFor(() => fake.webhookDeliveries.some((d) => d.update_id === update.update_id && d.status === 200));
      const statuses = fake.webhookDeliveries.filter((d) => d.update_id === update.update_id).map((d) => d.status);
      expect(statuses.slice(0, -1).every((s) => s === 503)).toBe(true);
      expect(statuses.at(-1)).toBe(200);
      expect(handed).toEqual(['held up']);
    } finally {
      await own.stop();
      await server.close();
    }
  });

  it('refuses a secret Telegram would not accept, naming the setting', () => {
    const make = () =>
      new TelegramIngress({
        token: fake.token,
        logger: silentLogger,
        webhook: { url: 'https://bot.example.com/hook', secret: 'has spaces!' },
      });
    expect(make).toThrow(/TELEGRAM_WEBHOOK_SECRET/);
  });

  it('rejects a body that is not an update', async () => {
    await startWithRoutes();
    const res = await app.inject({
      method: 'POST',
      url: PATH,
      headers: { 'x-telegram-bot-api-secret-token': SECRET },
      payload: { hello: 'world' },
    });
    expect(res.statusCode).toBe(400);
  });

  it('refuses (400) an update whose message has a field of the wrong type, instead of half-reading it', async () => {
    await startWithRoutes();
    const message = { message_id: 1, date: 1_700_000_000, chat: { id: 777, type: 'private' }, from: { id: 777 }, text: 'hi' };
    // Found by the fuzz suite (test/fuzz/telegram.e2e.test.ts): each once took the process to a 500 or a turn.
    const malformed = [
      { update_id: 1, message: { ...message, text: 123 } },
      { update_id: 2, message: { ...message, entities: [null] } },
      { update_id: 3, message: { ...message, photo: [null] } },
      { update_id: 4, message: { ...message, from: 'someone' } },
      { update_id: null, message },
      { update_id: '5', message },
    ];
    for (const payload of malformed) {
      const res = await app.inject({ method: 'POST', url: PATH, headers: { 'x-telegram-bot-api-secret-token': SECRET }, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const ok = await app.inject({ method: 'POST', url: PATH, headers: { 'x-telegram-bot-api-secret-token': SECRET }, payload: { update_id: 6, message } });
    expect(ok.statusCode).toBe(200);
    expect(received.map((m) => m.text)).toEqual(['hi']);
  });

  it('answers the malformed ids of issue 48 with a 400 (a press: 200, dropped), never a 500 or an internal message', async () => {
    await startWithRoutes();
    const forum = { id: -1001234567890, type: 'supergroup', is_forum: true };
    const message = { message_id: 1, date: 1_700_000_000, chat: { id: 777, type: 'private' }, from: { id: 777 }, text: 'hi' };
    const post = (payload: unknown) =>
      app.inject({ method: 'POST', url: PATH, headers: { 'x-telegram-bot-api-secret-token': SECRET }, payload: payload as object });
    const refused = [
      { update_id: 1, message: { ...message, chat: { id: 0, type: 'private' } } },
      { update_id: 2, message: { ...message, chat: forum, is_topic_message: true, message_thread_id: 0 } },
      { update_id: 3, message: { ...message, chat: forum, is_topic_message: true, message_thread_id: -3 } },
      { update_id: 4, message: { ...message, from: { id: 0 } } },
      { update_id: 5, message: { ...message, reply_to_message: { ...message, chat: { id: 0, type: 'private' } } } },
      { update_id: 0, message },
      { update_id: -7, message },
    ];
    for (const payload of refused) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.body).not.toMatch(/must be|\n\s+at /);
    }
    const press = await post({
      update_id: 8,
      callback_query: { id: 'q1', from: { id: 777 }, data: 'x', message: { ...message, chat: { id: 0, type: 'private' } } },
    });
    expect(press.statusCode).toBe(200);
    expect(press.body).not.toMatch(/must be|\n\s+at /);
    expect(received).toEqual([]);
  });
});
