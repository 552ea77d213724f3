/**
 * Discord application commands: the definitions made from the command table, and the real discord.js Client and
 * REST egress against the Discord stand-in — registered at start, acknowledged at once, answered through the
 * interaction's webhook.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startDiscordFake, type DiscordFake } from '../../../../test/fakes/discord/index.js';
import type { InboundMessage, PlatformIngress } from '../types.js';
import { applicationCommandsFor, commandText, type CommandMenuEntry } from './app-commands.js';
import type { DiscordIngressOptions } from './config.js';
import { createDiscordEgress } from './egress.js';
import { createDiscordIngress } from './ingress.js';

const logger = pino({ level: 'silent' });
const MENU: CommandMenuEntry[] = [
  { name: 'help', description: 'List the commands' },
  { name: 'new', description: 'Start a new conversation', aliases: ['reset'] },
  { name: 'title', description: 'Show or set the title', args: '[name]' },
];

describe('application command definitions', () => {
  it('makes one CHAT_INPUT command per name and alias, with one optional text option where the command takes input', () => {
    const defs = applicationCommandsFor(MENU);
    expect(defs.map((d) => d.name)).toEqual(['help', 'new', 'reset', 'title']);
    expect(defs[2].description).toBe('Start a new conversation (same as /new)');
    expect(defs[3].options).toEqual([{ type: 3, name: 'input', description: '[name]', required: false }]);
    expect(defs[0].options).toBeUndefined();
  });

  it('leaves out names Discord refuses and shortens descriptions past 100 characters', () => {
    const defs = applicationCommandsFor([
      { name: 'Bad Name', description: 'x' },
      { name: 'long', description: 'd'.repeat(150) },
    ]);
    expect(defs.map((d) => d.name)).toEqual(['long']);
    expect(defs[0].description).toHaveLength(100);
  });

  it('turns an invocation back into the chat command', () => {
    expect(commandText({ commandName: 'title', input: '  Trip to Rome ' })).toBe('/title Trip to Rome');
    expect(commandText({ commandName: 'status', input: null })).toBe('/status');
  });
});

describe('discord application commands against the stand-in', () => {
  let fake: DiscordFake;
  let ingress: PlatformIngress | null = null;
  let received: InboundMessage[];

  beforeEach(async () => {
    fake = await startDiscordFake();
    received = [];
  });

  afterEach(async () => {
    await ingress?.stop();
    ingress = null;
    await fake.close();
  });

  async function start(over: Partial<DiscordIngressOptions> = {}): Promise<void> {
    ingress = createDiscordIngress({
      botToken: fake.token,
      apiUrl: fake.apiRoot,
      threads: { has: () => false, add: () => undefined },
      commands: MENU,
      logger,
      ...over,
    });
    await ingress.start(async (m) => {
      received.push(m);
    });
  }

  it('registers the commands globally at start, and takes a DM command acknowledged (deferred, visible) before the hand-over', async () => {
    await start();
    expect(fake.interactions.registered.map((c) => [c.name, c.guildId])).toEqual([
      ['help', undefined],
      ['new', undefined],
      ['reset', undefined],
      ['title', undefined],
    ]);
    const { alice } = fake.fixtures;
    const dm = fake.openDm(alice);
    const id = fake.invokeCommand({ user: alice, channelId: dm, name: 'title', options: { input: 'Trip' } });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    const record = fake.interactions.interactions.get(id);
    expect(record).toMatchObject({ callbackType: 5, flags: 0 });
    expect(received[0]).toMatchObject({
      platform: 'discord',
      messageId: id,
      conversationId: `discord:${dm}`,
      chatType: 'dm',
      chatId: dm,
      userId: alice.id,
      userName: 'Alice',
      text: '/title Trip',
      interaction: { id, applicationId: fake.bot.id, ephemeral: false },
    });
  });

  it('registers per server when told to, and answers a server command only to its user (ephemeral), in chunks past 2,000 characters', async () => {
    const { guildId, generalChannelId, bob } = fake.fixtures;
    await start({ slashCommands: { enabled: true, guildIds: [guildId] } });
    expect(fake.interactions.registered.every((c) => c.guildId === guildId)).toBe(true);
    expect(() => fake.invokeCommand({ user: bob, channelId: fake.openDm(bob), name: 'help' })).toThrow(/not registered/);

    const id = fake.invokeCommand({ user: bob, channelId: generalChannelId, name: 'help' });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0]).toMatchObject({ chatType: 'channel', chatId: generalChannelId, userId: bob.id, text: '/help' });
    expect(fake.interactions.interactions.get(id)).toMatchObject({ callbackType: 5, flags: 64 });

    const egress = createDiscordEgress({ botToken: 'not-needed-for-interactions', apiUrl: fake.apiRoot, logger });
    const interaction = received[0].interaction;
    if (!interaction) throw new Error('no interaction on the message');
    await egress.answerInteraction?.(interaction, `${'a'.repeat(1500)}\n\n${'b'.repeat(1000)}`, { conversationId: received[0].conversationId, userId: bob.id });
    const messages = fake.interactions.interactions.get(id)?.messages ?? [];
    expect(messages.map((m) => [m.via, m.flags])).toEqual([
      ['original', 64],
      ['followup', 64],
    ]);
    expect(messages[0].content).toContain('a'.repeat(1500));
    expect(messages[1].content).toContain('b'.repeat(1000));
  });

  it('registers nothing when slash commands are off', async () => {
    await start({ slashCommands: { enabled: false, guildIds: [] } });
    expect(fake.interactions.registered).toEqual([]);
    expect(fake.requests.some((r) => r.route === 'putCommands')).toBe(false);
  });

  it('drops a command it could not acknowledge in time (Discord already told the user), and goes on with the next', async () => {
    await start();
    const { alice } = fake.fixtures;
    const dm = fake.openDm(alice);
    fake.interactions.ackWindowMs = -1;
    const late = fake.invokeCommand({ user: alice, channelId: dm, name: 'help' });
    await vi.waitFor(() => expect(fake.requests.some((r) => r.route === 'interactionCallback' && r.status === 404)).toBe(true));
    fake.interactions.ackWindowMs = 3_000;
    const next = fake.invokeCommand({ user: alice, channelId: dm, name: 'new' });
    await vi.waitFor(() => expect(received).toHaveLength(1));
    expect(received[0].messageId).toBe(next);
    expect(received.some((m) => m.messageId === late)).toBe(false);
  });
});
