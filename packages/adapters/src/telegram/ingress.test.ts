/** Polling ingress: the Bot API client against the Bot API stand-in, from injected user message to InboundMessage. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTelegramFake, telegramErrors, type TelegramFake } from '../../../../test/fakes/telegram/index.js';
import { AuthError } from '../errors.js';
import { TelegramEgress } from './egress.js';
import { TelegramIngress } from './ingress.js';
import { FAST_WAITS, silentLogger, startIngress, type RunningIngress } from './test-support.js';

const GROUP = -1001234567890;
const messageIdOf = (update: Record<string, unknown>): number => (update.message as { message_id: number }).message_id;

let fake: TelegramFake;
let running: RunningIngress | null = null;

beforeEach(async () => {
  fake = await startTelegramFake();
});

afterEach(async () => {
  await running?.ingress.stop();
  running = null;
  await fake.close();
});

describe('telegram polling ingress', () => {
  it('turns a private message into an InboundMessage', async () => {
    running = await startIngress(fake);
    const update = fake.injectMessage({ chatId: 777, userId: 777, userName: 'alice', text: 'Hello, Herald' });
    const [msg] = await fake.waitFor(() => running!.received.length === 1 && running!.received);
    const sent = update.message as { message_id: number; date: number };
    expect(msg).toEqual({
      platform: 'telegram',
      messageId: `777:${sent.message_id}`,
      conversationId: 'telegram:777',
      chatType: 'dm',
      chatId: '777',
      userId: '777',
      userName: 'alice',
      text: 'Hello, Herald',
      attachments: [],
      platformMessageId: String(sent.message_id),
      sentAt: sent.date * 1000,
    });
    // Plain JSON: survives the trip through Redis unchanged.
    expect(JSON.parse(JSON.stringify(msg))).toEqual(msg);
    expect(running.ingress.health().state).toBe('connected');
  });

  it('publishes the command menu by the time start() resolves', async () => {
    running = await startIngress(fake, {
      commands: [
        { name: 'stop', description: 'Stop the current turn' },
        { name: 'new', description: 'Start a new session' },
      ],
    });
    expect(fake.commands).toEqual([
      { command: 'stop', description: 'Stop the current turn' },
      { command: 'new', description: 'Start a new session' },
    ]);
  });

  it('hands an update delivered twice to the gateway once', async () => {
    running = await startIngress(fake);
    const update = fake.injectMessage({ chatId: 777, userId: 777, text: 'once' });
    await fake.waitFor(() => running!.received.length === 1);
    fake.redeliver(update);
    fake.injectMessage({ chatId: 777, userId: 777, text: '/status' });
    await fake.waitFor(() => running!.received.some((m) => m.text === '/status'));
    expect(running.received.map((m) => m.text)).toEqual(['once', '/status']);
  });

  it('confirms updates only after handing them over, so nothing is fetched twice after a restart', async () => {
    running = await startIngress(fake);
    fake.injectMessage({ chatId: 777, userId: 777, text: 'first' });
    await fake.waitFor(() => running!.received.length === 1);
    await running.ingress.stop();
    expect(fake.pendingUpdates()).toBe(0);
    running = await startIngress(fake);
    fake.injectMessage({ chatId: 777, userId: 777, text: 'second' });
    await fake.waitFor(() => running!.received.length === 1);
    expect(running.received.map((m) => m.text)).toEqual(['second']);
  });

  it('hands a text long enough to be a first part over at once, tagged as one that a next part may follow', async () => {
    running = await startIngress(fake);
    const update = fake.injectMessage({ chatId: 777, userId: 777, text: `a long one ${'x'.repeat(4000)}` });
    // Handed over without waiting for a part that may never come (no window, nothing held).
    const [msg] = await fake.waitFor(() => running!.received.length === 1 && running!.received);
    expect(msg.partOf).toEqual({ id: `777:${messageIdOf(update)}`, kind: 'text' });
    await fake.waitFor(() => fake.pendingUpdates() === 0);
  });

  it('in groups takes only messages addressed to the bot, stripping the mention and the command suffix', async () => {
    running = await startIngress(fake);
    const egress = new TelegramEgress({ token: fake.token, apiRoot: fake.apiRoot, logger: silentLogger });
    fake.injectMessage({ chatId: GROUP, userId: 5, text: 'warm-up, not for the bot' });
    const { messageIds } = await egress.send(`telegram:${GROUP}`, 'I am the bot');
    const botMessage = Number(messageIds[0]);

    fake.injectMessage({ chatId: GROUP, userId: 5, text: 'just chatting among humans' });
    fake.injectMessage({ chatId: GROUP, userId: 5, text: '@Herald_Test_Bot hi there' });
    fake.injectMessage({ chatId: GROUP, userId: 6, text: 'and a reply', replyTo: botMessage });
    fake.injectMessage({ chatId: GROUP, userId: 7, text: '/stop@herald_test_bot' });
    fake.injectMessage({ chatId: GROUP, userId: 7, text: '/stop@some_other_bot' });
    fake.injectMessage({ chatId: GROUP, userId: 8, text: 'last one @herald_test_bot' });
    await fake.waitFor(() => running!.received.some((m) => m.userId === '8'));

    // Order is kept per user (sessions are per user in groups); a command is not held back behind others' texts.
    const byUser = [...running.received].sort((a, b) => Number(a.userId) - Number(b.userId));
    expect(byUser.map((m) => [m.userId, m.chatType, m.text])).toEqual([
      ['5', 'group', 'hi there'],
      ['6', 'group', 'and a reply'],
      ['7', 'group', '/stop'],
      ['8', 'group', 'last one'],
    ]);
    const reply = byUser[1];
    expect(reply.quoted).toEqual({ platformMessageId: String(botMessage), text: 'I am the bot', fromBot: true });
  });

  it('takes every group message when requireMention is off', async () => {
    running = await startIngress(fake, { requireMention: false });
    fake.injectMessage({ chatId: GROUP, userId: 5, text: 'no mention at all' });
    await fake.waitFor(() => running!.received.length === 1);
    expect(running.received[0].text).toBe('no mention at all');
  });

  it('tags the parts of a text the client split with one id, handing each over at once; the short last part ends it', async () => {
    running = await startIngress(fake);
    const partA = 'a'.repeat(4096);
    const partB = 'b'.repeat(4000);
    const partC = 'c'.repeat(1200);
    const first = fake.injectMessage({ chatId: 777, userId: 777, text: partA });
    fake.injectMessage({ chatId: 777, userId: 777, text: partB });
    fake.injectMessage({ chatId: 777, userId: 777, text: partC });
    fake.injectMessage({ chatId: 777, userId: 777, text: 'a new thought' });
    await fake.waitFor(() => running!.received.length === 4);
    const id = `777:${messageIdOf(first)}`;
    expect(running.received.map((m) => [m.text, m.partOf])).toEqual([
      [partA, { id, kind: 'text' }],
      [partB, { id, kind: 'text' }],
      [partC, { id, kind: 'text', last: true }],
      ['a new thought', undefined],
    ]);
  });

  it('leaves short texts untagged, and a command after a long text is not a part of it', async () => {
    running = await startIngress(fake);
    const longQuestion = 'q'.repeat(4096);
    fake.injectMessage({ chatId: 777, userId: 777, text: 'hi' });
    fake.injectMessage({ chatId: 777, userId: 777, text: 'are you there?' });
    fake.injectMessage({ chatId: 777, userId: 777, text: longQuestion });
    fake.injectMessage({ chatId: 777, userId: 777, text: '/stop' });
    fake.injectMessage({ chatId: 777, userId: 777, text: 'and after the command' });
    await fake.waitFor(() => running!.received.length === 5);
    expect(running.received.map((m) => [m.text, m.partOf?.kind])).toEqual([
      ['hi', undefined],
      ['are you there?', undefined],
      [longQuestion, 'text'],
      ['/stop', undefined],
      ['and after the command', undefined],
    ]);
  });

  it('in a group, takes the next parts of a split text whose first part mentioned the bot, and nothing else unaddressed', async () => {
    running = await startIngress(fake);
    const group = -100_777;
    const first = fake.injectMessage({ chatId: group, userId: 5, text: `@herald_test_bot ${'p'.repeat(4080)}` });
    fake.injectMessage({ chatId: group, userId: 5, text: 'the end of my question' });
    fake.injectMessage({ chatId: group, userId: 5, text: 'chatting with the others now' });
    fake.injectMessage({ chatId: group, userId: 6, text: `${'o'.repeat(4096)}` });
    fake.injectMessage({ chatId: group, userId: 5, text: '@herald_test_bot done' });
    await fake.waitFor(() => running!.received.some((m) => m.text === 'done'));
    const id = `${group}:${messageIdOf(first)}`;
    expect(running.received.map((m) => [m.text.slice(0, 22), m.partOf])).toEqual([
      ['p'.repeat(22), { id, kind: 'text' }],
      ['the end of my question', { id, kind: 'text', last: true }],
      ['done', undefined],
    ]);
  });

  it('maps a forum topic to threadId and replies into that topic', async () => {
    running = await startIngress(fake);
    const topic = fake.createTopic(GROUP, 'Planning');
    fake.injectMessage({ chatId: GROUP, userId: 5, threadId: topic, text: '@herald_test_bot plan the week' });
    const [msg] = await fake.waitFor(() => running!.received.length === 1 && running!.received);
    expect(msg.threadId).toBe(String(topic));
    expect(msg.conversationId).toBe(`telegram:${GROUP}:${topic}`);
    // Telegram points reply_to_message at the topic's creation message; that is not a reply.
    expect(msg.quoted).toBeUndefined();

    const egress = new TelegramEgress({ token: fake.token, apiRoot: fake.apiRoot, logger: silentLogger });
    await egress.send(msg.conversationId, 'Here is the plan', { replyTo: msg.platformMessageId });
    const sent = fake.sent.filter((s) => s.method === 'sendMessage');
    expect(sent).toMatchObject([{ chat_id: String(GROUP), message_thread_id: topic, reply_to_message_id: Number(msg.platformMessageId) }]);
  });

  it('puts General-topic messages in thread 1: replies omit it, typing names it', async () => {
    running = await startIngress(fake);
    fake.injectMessage({ chatId: GROUP, userId: 5, isForum: true, text: '@herald_test_bot hello from General' });
    const [msg] = await fake.waitFor(() => running!.received.length === 1 && running!.received);
    expect(msg.threadId).toBe('1');
    expect(msg.conversationId).toBe(`telegram:${GROUP}:1`);

    const egress = new TelegramEgress({ token: fake.token, apiRoot: fake.apiRoot, logger: silentLogger });
    await egress.typing(msg.conversationId);
    await egress.send(msg.conversationId, 'Hi');
    const [typing, sent] = fake.sent;
    expect(typing).toMatchObject({ method: 'sendChatAction', action: 'typing', message_thread_id: 1 });
    expect(sent.method).toBe('sendMessage');
    expect(sent.message_thread_id).toBeUndefined();
    // Telegram refuses thread 1 for sends; none was attempted.
    expect(fake.callsOf('sendMessage').every((c) => c.status === 200)).toBe(true);
  });

  it('describes photos, documents and voice notes as tg-file attachments, with the caption as text', async () => {
    running = await startIngress(fake);
    fake.injectMessage({ chatId: 777, userId: 777, caption: 'what is this?', photo: { bytes: 4000 } });
    fake.injectMessage({ chatId: 777, userId: 777, document: { fileName: 'report.pdf', mimeType: 'application/pdf' } });
    fake.injectMessage({ chatId: 777, userId: 777, voice: { duration: 4 } });
    await fake.waitFor(() => running!.received.length === 3);
    const [photo, doc, voice] = running.received;
    expect(photo.text).toBe('what is this?');
    expect(photo.attachments).toEqual([
      { kind: 'image', url: expect.stringMatching(/^tg-file:/), fileId: expect.any(String), mimeType: 'image/jpeg', size: 4000 },
    ]);
    expect(photo.attachments[0].url).toBe(`tg-file:${photo.attachments[0].fileId}`);
    expect(doc.attachments).toMatchObject([{ kind: 'file', mimeType: 'application/pdf', name: 'report.pdf' }]);
    expect(voice.attachments).toMatchObject([{ kind: 'audio', mimeType: 'audio/ogg', voice: true }]);
    // The file id resolves through getFile, which is what the worker will do.
    const fileId = photo.attachments[0].url.slice('tg-file:'.length);
    const res = await fetch(`${fake.apiRoot}/bot${fake.token}/getFile?file_id=${encodeURIComponent(fileId)}`);
    expect(((await res.json()) as { result: { file_size: number } }).result.file_size).toBe(4000);
  });

  it('hands each photo of an album over at once, marked with its album, in order with the next message', async () => {
    running = await startIngress(fake);
    fake.injectMessage({ chatId: 778, userId: 778, caption: 'our trip', photo: true, mediaGroupId: 'g1' });
    fake.injectMessage({ chatId: 778, userId: 778, photo: true, mediaGroupId: 'g1' });
    fake.injectMessage({ chatId: 778, userId: 778, text: 'after the album' });
    await fake.waitFor(() => running!.received.length === 3);
    const [first, second, after] = running.received;
    expect([first.text, second.text]).toEqual(['our trip', '']);
    expect([first.partOf, second.partOf]).toEqual([
      { id: 'g1', kind: 'album' },
      { id: 'g1', kind: 'album' },
    ]);
    expect([...first.attachments, ...second.attachments].map((a) => a.kind)).toEqual(['image', 'image']);
    expect(first.attachments[0].fileId).not.toBe(second.attachments[0].fileId);
    expect(after.text).toBe('after the album');
    expect(after.partOf).toBeUndefined();
  });

  it('in a group, takes the parts of an album whose caption mentioned the bot, and not those of another album', async () => {
    running = await startIngress(fake);
    const group = -100_778;
    fake.injectMessage({ chatId: group, userId: 5, chatType: 'supergroup', caption: '@herald_test_bot look', photo: true, mediaGroupId: 'g2' });
    fake.injectMessage({ chatId: group, userId: 5, chatType: 'supergroup', photo: true, mediaGroupId: 'g2' });
    fake.injectMessage({ chatId: group, userId: 5, chatType: 'supergroup', photo: true, mediaGroupId: 'g3' });
    fake.injectMessage({ chatId: group, userId: 5, chatType: 'supergroup', text: '@herald_test_bot done' });
    await fake.waitFor(() => running!.received.length === 3);
    expect(running.received.map((m) => [m.text, m.partOf?.id])).toEqual([
      ['look', 'g2'],
      ['', 'g2'],
      ['done', undefined],
    ]);
  });

  it('removes a leftover webhook before polling', async () => {
    await fetch(`${fake.apiRoot}/bot${fake.token}/setWebhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/old-deployment' }),
    });
    running = await startIngress(fake);
    expect(fake.webhook).toBeNull();
    fake.injectMessage({ chatId: 777, userId: 777, text: 'still reachable' });
    await fake.waitFor(() => running!.received.length === 1);
  });

  it('retries a 409 conflict with another poller, then stops with a clear fatal error', async () => {
    // Another process polls with the same token: each new getUpdates terminates the other's pending one.
    const competitor = new AbortController();
    const compete = (async () => {
      while (!competitor.signal.aborted) {
        await fetch(`${fake.apiRoot}/bot${fake.token}/getUpdates?timeout=5`, { signal: competitor.signal }).catch(() => undefined);
      }
    })();
    try {
      running = await startIngress(fake);
      await fake.waitFor(() => running!.ingress.health().state === 'fatal', 10_000);
      expect(running.ingress.health().error).toMatch(/another process is polling with this bot token/);
      const conflicts = fake.callsOf('getUpdates').filter((c) => c.status === 409).length;
      expect(conflicts).toBeGreaterThanOrEqual(6); // ours: first try + 5 retries (the competitor adds its own)
    } finally {
      competitor.abort();
      await compete;
    }
  });

  it('goes disconnected on network errors and reconnects when the API is back', async () => {
    running = await startIngress(fake);
    await fake.stop();
    await fake.waitFor(() => running!.ingress.health().state === 'disconnected');
    expect(running.ingress.health().error).toMatch(/getUpdates failed/);
    await fake.restart();
    fake.injectMessage({ chatId: 777, userId: 777, text: 'back online' });
    await fake.waitFor(() => running!.received.length === 1, 10_000);
    expect(running.ingress.health().state).toBe('connected');
  });

  it('notices a connection that went silent (no answer at all), shows it, and recovers', async () => {
    running = await startIngress(fake, { pollTimeoutSec: 1, callTimeoutMs: 300 });
    await fake.waitFor(() => fake.callsOf('getUpdates').length >= 1);
    // The next polls are swallowed: no error, no answer — a NAT that dropped the connection looks like this.
    fake.failNext('getUpdates', 'silence', 2);
    await fake.waitFor(() => running!.ingress.health().state === 'disconnected', 10_000);
    expect(running.ingress.health().error).toMatch(/no answer to getUpdates within 1 s/);
    fake.injectMessage({ chatId: 777, userId: 777, text: 'after the silence' });
    await fake.waitFor(() => running!.received.length === 1, 10_000);
    expect(running.received[0].text).toBe('after the silence');
    expect(running.ingress.health().state).toBe('connected');
  });

  it('leaves retrying a hand-over to the gateway: an update whose hand-over failed is tried once, then confirmed', async () => {
    // The gateway's hand-over already retried (edges/ingress/handover.ts); retrying here as well multiplied the attempts.
    const calls = new Map<string, number>();
    const received: string[] = [];
    const ingress = new TelegramIngress({ token: fake.token, apiRoot: fake.apiRoot, logger: silentLogger, waits: FAST_WAITS, pollTimeoutSec: 1 });
    running = { ingress, received: [] };
    await ingress.start(async (m) => {
      calls.set(m.text, (calls.get(m.text) ?? 0) + 1);
      if (m.text === 'always refused') throw new Error('the gateway gave up on it');
      received.push(m.text);
    });
    fake.injectMessage({ chatId: 777, userId: 777, text: 'always refused' });
    fake.injectMessage({ chatId: 778, userId: 778, text: 'fine' });
    await fake.waitFor(() => received.length === 1 && fake.pendingUpdates() === 0, 10_000);
    expect(received).toEqual(['fine']);
    expect(calls.get('always refused')).toBe(1);
  });

  it('keeps an update the gateway gave up on because of shutdown unconfirmed, so the next start takes it', async () => {
    let handing!: () => void;
    const handedIn = new Promise<void>((resolve) => (handing = resolve));
    let giveUp!: (err: Error) => void;
    const ingress = new TelegramIngress({ token: fake.token, apiRoot: fake.apiRoot, logger: silentLogger, waits: FAST_WAITS, pollTimeoutSec: 1 });
    await ingress.start(
      (m) =>
        new Promise<void>((_, reject) => {
          if (m.text !== 'sent just before the shutdown') return;
          giveUp = reject;
          handing();
        }),
    );
    fake.injectMessage({ chatId: 777, userId: 777, text: 'sent just before the shutdown' });
    await handedIn;
    // As in the gateway: shutdown begins, then the hand-over still being retried is given up.
    const stopping = ingress.stop();
    giveUp(new Error('shutting down'));
    await stopping;
    expect(fake.pendingUpdates()).toBe(1);

    running = await startIngress(fake);
    await fake.waitFor(() => running!.received.length === 1, 10_000);
    expect(running.received.map((m) => m.text)).toEqual(['sent just before the shutdown']);
  });

  it('becomes fatal when the token is revoked while polling', async () => {
    running = await startIngress(fake);
    fake.failNext('getUpdates', telegramErrors.unauthorized());
    fake.injectMessage({ chatId: 777, userId: 777, text: 'wakes the poll' });
    await fake.waitFor(() => running!.ingress.health().state === 'fatal');
    expect(running.ingress.health().error).toMatch(/401 Unauthorized/);
  });

  it('refuses to start with a revoked token', async () => {
    const ingressRun = startIngress(fake, { token: '999:wrong' });
    await expect(ingressRun).rejects.toBeInstanceOf(AuthError);
  });

  it('keeps going when the gateway fails to take a message', async () => {
    let calls = 0;
    const ingress = new TelegramIngress({ token: fake.token, apiRoot: fake.apiRoot, logger: silentLogger });
    const taken: string[] = [];
    await ingress.start(async (m) => {
      if (calls++ === 0) throw new Error('redis down');
      taken.push(m.text);
    });
    running = { ingress, received: [] };
    fake.injectMessage({ chatId: 777, userId: 777, text: 'lost in the outage' });
    fake.injectMessage({ chatId: 777, userId: 777, text: '/status' });
    await fake.waitFor(() => taken.length === 1);
    expect(taken).toEqual(['/status']);
    expect(ingress.health().state).toBe('connected');
  });
});
