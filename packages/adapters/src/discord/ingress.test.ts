/**
 * The real discord.js Client against the Discord stand-in: from an event a user causes to the InboundMessage the
 * gateway receives.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { discordFailures, startDiscordFake, type DiscordFake } from '../../../../test/fakes/discord/index.js';
import { AuthError } from '../errors.js';
import type { InboundMessage, PlatformIngress } from '../types.js';
import type { DiscordIngressOptions } from './config.js';
import { createDiscordEgress } from './egress.js';
import { createDiscordIngress } from './ingress.js';
import { createDiscordRest } from './rest.js';

const logger = pino({ level: 'silent' });

let fake: DiscordFake;
let ingress: PlatformIngress | null = null;
let received: InboundMessage[];
let threads: Set<string>;

beforeEach(async () => {
  fake = await startDiscordFake();
  received = [];
  threads = new Set();
});

afterEach(async () => {
  await ingress?.stop();
  ingress = null;
  await fake.close();
});

function makeIngress(over: Partial<DiscordIngressOptions> = {}): PlatformIngress {
  ingress = createDiscordIngress({
    botToken: fake.token,
    apiUrl: fake.apiRoot,
    threads: { has: (id) => threads.has(id), add: (id) => void threads.add(id) },
    logger,
    ...over,
  });
  return ingress;
}

async function startIngress(over: Partial<DiscordIngressOptions> = {}, handler?: (m: InboundMessage) => Promise<void>): Promise<void> {
  await makeIngress(over).start(
    handler ??
      (async (m) => {
        received.push(m);
      }),
  );
}

const mentionBot = (text: string): string => `<@${fake.bot.id}> ${text}`;

/** Posts a mention in `channelId` and waits for it: messages of one channel are handled in order, so anything posted before it there has been decided on. */
async function sentinel(channelId: string, count: number): Promise<void> {
  fake.postUserMessage({ channelId, author: fake.fixtures.alice, content: mentionBot('sentinel') });
  await vi.waitFor(() => expect(received).toHaveLength(count));
  expect(received[count - 1].text).toBe('sentinel');
}

describe('discord ingress', () => {
  it('opens a thread for a mention in a channel, points the message at it, then takes follow-ups there without a mention', async () => {
    await startIngress();
    const { generalChannelId, alice } = fake.fixtures;
    const posted = fake.postUserMessage({ channelId: generalChannelId, author: alice, content: mentionBot('How do I bake bread?\nI have rye.') });
    const messageId = String(posted.id);

    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(fake.threadsCreated).toEqual([{ id: messageId, parentId: generalChannelId, messageId, name: 'How do I bake bread?', autoArchiveDuration: 1440 }]);
    expect(received[0]).toMatchObject({
      platform: 'discord',
      messageId,
      platformMessageId: messageId,
      chatType: 'thread',
      chatId: generalChannelId,
      threadId: messageId,
      conversationId: `discord:${generalChannelId}:${messageId}`,
      userId: alice.id,
      userName: 'Alice',
      text: 'How do I bake bread?\nI have rye.',
    });
    expect(threads.has(messageId)).toBe(true);

    fake.postUserMessage({ channelId: messageId, author: alice, content: 'And without yeast?' });
    await vi.waitFor(() => expect(received).toHaveLength(2));
    expect(received[1]).toMatchObject({ chatType: 'thread', chatId: generalChannelId, threadId: messageId, text: 'And without yeast?' });
    expect(fake.threadsCreated).toHaveLength(1);
  });

  it('calls Discord through the REST client it is given, which the egress shares and can still use after the ingress stopped', async () => {
    const rest = createDiscordRest({ botToken: fake.token, apiUrl: fake.apiRoot });
    const paths: string[] = [];
    rest.on('response', (request) => paths.push(`${request.method} ${request.path}`));
    await startIngress({ rest });
    const { generalChannelId, alice } = fake.fixtures;
    const posted = fake.postUserMessage({ channelId: generalChannelId, author: alice, content: mentionBot('Hello') });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    // The gateway's address and the thread the mention opened: discord.js' calls went through the shared client.
    expect(paths).toContain('GET /gateway/bot');
    expect(paths).toContain(`POST /channels/${generalChannelId}/messages/${posted.id}/threads`);

    await ingress?.stop();
    ingress = null;
    const egress = createDiscordEgress({ botToken: fake.token, logger, rest });
    await egress.send(received[0].conversationId, 'Hi Alice');
    expect(fake.sent.map((m) => m.content)).toEqual(['Hi Alice']);
  });

  it('ignores channel messages without a mention, mentions of other people only, and its own messages', async () => {
    await startIngress();
    const { generalChannelId, alice, bob } = fake.fixtures;
    fake.postUserMessage({ channelId: generalChannelId, author: alice, content: 'just chatting' });
    fake.postUserMessage({ channelId: generalChannelId, author: alice, content: `<@${bob.id}> have a look` });
    fake.world.createBotMessage(generalChannelId, { content: `<@${fake.bot.id}> talking to myself` });
    await sentinel(generalChannelId, 1);
    expect(fake.threadsCreated).toHaveLength(1);
  });

  it('ignores a thread it does not take part in', async () => {
    await startIngress();
    const { generalChannelId, alice } = fake.fixtures;
    const threadId = fake.createUserThread(generalChannelId, 'people only', alice);
    fake.postUserMessage({ channelId: threadId, author: alice, content: 'nothing for the bot' });
    await sentinel(threadId, 1);
    // Mentioned inside someone else's thread: answered there, and the bot now takes part.
    expect(received[0]).toMatchObject({ chatType: 'thread', threadId, conversationId: `discord:${generalChannelId}:${threadId}` });
    expect(threads.has(threadId)).toBe(true);
    expect(fake.threadsCreated).toHaveLength(0);
  });

  it('takes a DM without a mention', async () => {
    await startIngress();
    const dmId = fake.openDm(fake.fixtures.alice);
    fake.postUserMessage({ channelId: dmId, author: fake.fixtures.alice, content: 'hello there' });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0]).toMatchObject({ chatType: 'dm', chatId: dmId, conversationId: `discord:${dmId}`, text: 'hello there', userName: 'Alice' });
    expect(received[0]).not.toHaveProperty('threadId');
  });

  it('counts a reply to one of its messages as a mention and quotes it', async () => {
    await startIngress({ autoThread: false });
    const { generalChannelId, alice } = fake.fixtures;
    const answer = fake.world.createBotMessage(generalChannelId, { content: 'Bread needs flour.' });
    fake.postUserMessage({ channelId: generalChannelId, author: alice, content: 'which flour?', referenced: String(answer.id), pingReplied: false });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0]).toMatchObject({
      chatType: 'channel',
      conversationId: `discord:${generalChannelId}`,
      text: 'which flour?',
      quoted: { platformMessageId: String(answer.id), text: 'Bread needs flour.', fromBot: true },
    });
  });

  it('takes a mention of its managed role, and every message in a free-response channel, without opening threads there', async () => {
    await startIngress({ freeResponseChannels: [fake.fixtures.freeChannelId] });
    const { freeChannelId, botRoleId, alice } = fake.fixtures;
    fake.postUserMessage({ channelId: freeChannelId, author: alice, content: 'no mention needed here' });
    fake.postUserMessage({ channelId: freeChannelId, author: alice, content: `<@&${botRoleId}> role ping` });
    await vi.waitFor(() => expect(received).toHaveLength(2));
    expect(received.map((m) => [m.chatType, m.text])).toEqual([
      ['channel', 'no mention needed here'],
      ['channel', 'role ping'],
    ]);
    expect(fake.threadsCreated).toHaveLength(0);
  });

  it('answers in the channel when Discord refuses to open a thread', async () => {
    await startIngress();
    fake.failNext('startThread', discordFailures.missingPermissions());
    fake.postUserMessage({ channelId: fake.fixtures.generalChannelId, author: fake.fixtures.alice, content: mentionBot('hi') });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0]).toMatchObject({ chatType: 'channel', conversationId: `discord:${fake.fixtures.generalChannelId}` });
  });

  it('an empty mention still reaches the agent with a note', async () => {
    await startIngress();
    const dmId = fake.openDm(fake.fixtures.alice);
    fake.postUserMessage({ channelId: dmId, author: fake.fixtures.alice, content: `<@${fake.bot.id}>` });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0].text).toBe('(the user sent no text)');
  });

  describe('other bots', () => {
    it('are ignored by default, even when they mention the bot', async () => {
      await startIngress();
      const { generalChannelId, otherBot } = fake.fixtures;
      fake.postUserMessage({ channelId: generalChannelId, author: otherBot, content: mentionBot('ping from a bot') });
      await sentinel(generalChannelId, 1);
    });

    it("in 'mentions' mode are taken only when they mention the bot", async () => {
      await startIngress({ allowBots: 'mentions', freeResponseChannels: [fake.fixtures.freeChannelId] });
      const { freeChannelId, otherBot } = fake.fixtures;
      fake.postUserMessage({ channelId: freeChannelId, author: otherBot, content: 'chatter' });
      fake.postUserMessage({ channelId: freeChannelId, author: otherBot, content: mentionBot('a question') });
      await vi.waitFor(() => expect(received).toHaveLength(1));
      expect(received[0]).toMatchObject({ userId: otherBot.id, text: 'a question' });
      await sentinel(freeChannelId, 2);
    });

    it("in 'all' mode are taken like people", async () => {
      await startIngress({ allowBots: 'all', freeResponseChannels: [fake.fixtures.freeChannelId] });
      fake.postUserMessage({ channelId: fake.fixtures.freeChannelId, author: fake.fixtures.otherBot, content: 'chatter' });
      await vi.waitFor(() => expect(received).toHaveLength(1));
      expect(received[0]).toMatchObject({ userId: fake.fixtures.otherBot.id, text: 'chatter' });
    });
  });

  it('hands over events Discord replays after a RESUME only once, and delivers what was missed', async () => {
    await startIngress();
    const { alice } = fake.fixtures;
    const dmId = fake.openDm(alice);
    // A backlog longer than discord.js's per-channel message cache, so only the adapter's own dedupe can catch it.
    const backlog = Array.from({ length: 15 }, (_, i) => `message ${i + 1}`);
    for (const content of backlog) fake.postUserMessage({ channelId: dmId, author: alice, content });
    await vi.waitFor(() => expect(received).toHaveLength(backlog.length));

    expect(fake.dropConnections({ code: 4000, replay: backlog.length })).toBe(1);
    fake.postUserMessage({ channelId: dmId, author: alice, content: 'while away' });
    await vi.waitFor(() => expect(received).toHaveLength(backlog.length + 1), { timeout: 10_000 });
    expect(fake.resumeCount).toBe(1);
    expect(fake.identifyCount).toBe(1);
    // Discord may also deliver twice on a live connection.
    fake.replayLast(backlog.length + 1);
    await sentinel(dmId, backlog.length + 2);
    expect(received.map((m) => m.text)).toEqual([...backlog, 'while away', 'sentinel']);
  });

  it('keeps going when the handler fails for one message', async () => {
    let calls = 0;
    await startIngress({}, async (m) => {
      calls += 1;
      if (calls === 1) throw new Error('queue unavailable');
      received.push(m);
    });
    const dmId = fake.openDm(fake.fixtures.alice);
    fake.postUserMessage({ channelId: dmId, author: fake.fixtures.alice, content: 'lost to the outage' });
    fake.postUserMessage({ channelId: dmId, author: fake.fixtures.alice, content: 'after the outage' });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0].text).toBe('after the outage');
  });

  it('health follows the connection: connected, reconnecting while the gateway is away, connected after the resume', async () => {
    const ing = makeIngress();
    expect(ing.health().state).toBe('disconnected');
    await ing.start(async (m) => void received.push(m));
    expect(ing.health()).toMatchObject({ state: 'connected', error: null });
    expect(ing.health().lastEventAt).toEqual(expect.any(Number));

    fake.setGatewayAvailable(false);
    fake.dropConnections({ abrupt: true });
    await vi.waitFor(() => expect(ing.health().state).toBe('connecting'));
    await vi.waitFor(() => expect(ing.health().error).toMatch(/503/), { timeout: 5_000 });

    fake.setGatewayAvailable(true);
    await vi.waitFor(() => expect(ing.health()).toMatchObject({ state: 'connected', error: null }), { timeout: 10_000 });
    expect(fake.resumeCount).toBeGreaterThanOrEqual(1);

    await ing.stop();
    expect(ing.health().state).toBe('disconnected');
  });

  describe('start-up failures', () => {
    it('explains a missing Message Content intent (close code 4014) and where to enable it', async () => {
      fake.setMessageContentIntent(false);
      const ing = makeIngress();
      const failure = ing.start(async () => undefined);
      await expect(failure).rejects.toBeInstanceOf(AuthError);
      await expect(failure).rejects.toThrow(/4014.*Developer Portal → your application → Bot → Privileged Gateway Intents → Message Content Intent/s);
      expect(ing.health().state).toBe('fatal');
    });

    it('explains a bad token refused by REST', async () => {
      const ing = makeIngress({ botToken: 'not-the-token' });
      await expect(ing.start(async () => undefined)).rejects.toThrow(/rejected the bot token \(DISCORD_BOT_TOKEN\)/);
      expect(ing.health()).toMatchObject({ state: 'fatal', error: expect.stringMatching(/DISCORD_BOT_TOKEN/) });
    });

    it('explains a bad token refused by the gateway (close code 4004)', async () => {
      fake.rejectNextIdentify(4004);
      await expect(makeIngress().start(async () => undefined)).rejects.toThrow(/rejected the bot token/);
    });
  });
});
