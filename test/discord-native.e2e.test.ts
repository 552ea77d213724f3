/**
 * Issue 21 on Discord, end to end: the real gateway (real discord.js inside it) against the Discord stand-in.
 * Slash commands are registered at start, acknowledged at once (deferred) and answered through the interaction,
 * with the same allowlist and pairing as typed commands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake, type InteractionRecord } from './fakes/discord/index.js';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { discordEnv, discordRepliesIn, waitForDiscordReady } from './helpers/discord.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

describe('discord native interactions (issue 21)', () => {
  let discord: DiscordFake;
  let llm: FakeLLM;
  let cluster: Cluster;

  beforeAll(async () => {
    discord = await startDiscordFake();
    llm = await startFakeOpenAI();
    llm.respondWith(async (req) => ({ text: `ok: ${lastUserText(req)}` }));
    // Alice is allowed; Bob is a stranger.
    const env = discordEnv(discord, llm, { GATEWAY_ALLOW_ALL_USERS: 'false', DISCORD_ALLOWED_USERS: discord.fixtures.alice.id });
    cluster = await startCluster({ workers: 0, env });
    await waitForDiscordReady(cluster.ingress);
  });

  afterAll(async () => {
    await cluster?.stop();
    await discord?.close();
    await llm?.close();
  });

  /** The interaction once the bot has answered it (its original response filled in). */
  async function answered(id: string): Promise<InteractionRecord> {
    await waitFor(() => (discord.interactions.interactions.get(id)?.messages.length ?? 0) > 0, { what: `an answer to interaction ${id}` });
    const record = discord.interactions.interactions.get(id);
    if (!record) throw new Error(`no interaction ${id}`);
    return record;
  }

  it("registers Herald's commands globally at start, aliases and inputs included", () => {
    const names = discord.interactions.registered.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['help', 'new', 'reset', 'stop', 'status', 'title', 'resume', 'queue']));
    expect(discord.interactions.registered.every((c) => c.guildId === undefined)).toBe(true);
    expect(discord.interactions.registered.find((c) => c.name === 'title')?.options).toEqual([
      { type: 3, name: 'input', description: '[name]', required: false },
    ]);
  });

  it('a slash command in a DM is acknowledged, then answered in the open in the same session as typed messages', async () => {
    const { alice } = discord.fixtures;
    const dm = discord.openDm(alice);
    discord.postUserMessage({ channelId: dm, author: alice, content: 'hello there' });
    await waitFor(() => discordRepliesIn(discord, dm).includes('ok: hello there'), { what: 'the answer in the DM' });

    const id = discord.invokeCommand({ user: alice, channelId: dm, name: 'title', options: { input: 'Trip to Rome' } });
    const record = await answered(id);
    expect(record.callbackType).toBe(5);
    expect(record.flags).toBe(0);
    expect(record.messages.map((m) => m.content)).toEqual(['🏷 Titled “Trip to Rome”.']);

    const status = await answered(discord.invokeCommand({ user: alice, channelId: dm, name: 'status' }));
    expect(status.messages[0].content).toContain('“Trip to Rome”');
    // Nothing was posted in the channel itself for either command.
    expect(discordRepliesIn(discord, dm)).toEqual(['ok: hello there']);
  });

  it('in a server channel the answer is only shown to the person who asked (ephemeral)', async () => {
    const { alice, generalChannelId } = discord.fixtures;
    const record = await answered(discord.invokeCommand({ user: alice, channelId: generalChannelId, name: 'help' }));
    expect(record.flags).toBe(64);
    expect(record.messages[0].content).toMatch(/^Commands:/);
    expect(record.messages.every((m) => m.flags === 64)).toBe(true);
  });

  it("a stranger's command in a server is closed with a private note, and in a DM gets a pairing code", async () => {
    const { bob, generalChannelId } = discord.fixtures;
    const inServer = await answered(discord.invokeCommand({ user: bob, channelId: generalChannelId, name: 'status' }));
    expect(inServer.messages.map((m) => m.content)).toEqual(['⛔ You are not allowed to use this bot here.']);
    expect(inServer.flags).toBe(64);

    const inDm = await answered(discord.invokeCommand({ user: bob, channelId: discord.openDm(bob), name: 'status' }));
    expect(inDm.messages[0].content).toContain('pairing code');
  });

  it('a command with nothing to say (/queue while idle) still closes its interaction', async () => {
    const { alice } = discord.fixtures;
    const dm = discord.openDm(alice);
    const record = await answered(discord.invokeCommand({ user: alice, channelId: dm, name: 'queue', options: { input: 'queued hello' } }));
    expect(record.messages.map((m) => m.content)).toEqual(['✅ Done.']);
    await waitFor(() => discordRepliesIn(discord, dm).includes('ok: queued hello'), { what: 'the queued text answered in the DM' });
  });
});
