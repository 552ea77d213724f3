/**
 * Issue 21 on Discord, end to end: the real gateway (real discord.js inside it) against the Discord stand-in.
 * Slash commands are registered at start, acknowledged at once (deferred) and answered through the interaction,
 * with the same allowlist and pairing as typed commands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake, type InteractionRecord } from './fakes/discord/index.js';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { clarifyScript } from './helpers/clarify-script.js';
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
    llm.respondWith(async (req) => clarifyScript(req));
    // Alice is allowed; Bob is a stranger.
    const env = discordEnv(discord, llm, {
      GATEWAY_ALLOW_ALL_USERS: 'false',
      DISCORD_ALLOWED_USERS: discord.fixtures.alice.id,
      HERALD_TOOLSETS: 'full',
      DISCORD_STATUS_REACTIONS: '👀,⚙️,✅,⚠️',
    });
    cluster = await startCluster({ workers: 0, env });
    await waitForDiscordReady(cluster.ingress);
    // Registration follows READY (a PUT of the whole list): commands are offered to users once it is done.
    await waitFor(() => discord.interactions.registered.length > 0, { what: 'the application commands to be registered' });
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

  /** The last message the bot posted in a channel that carries buttons, and its buttons' ids by label. */
  function buttonsIn(channelId: string): { messageId: string; ids: Record<string, string> } | null {
    const sent = discord.sent.filter((m) => m.channelId === channelId && m.components?.length).at(-1);
    if (!sent?.components) return null;
    const ids: Record<string, string> = {};
    for (const row of sent.components) for (const b of (row.components ?? []) as Array<{ label: string; custom_id: string }>) ids[b.label] = b.custom_id;
    return { messageId: sent.id, ids };
  }

  it("a clarify question's choices are buttons: a press answers it in the same turn; a second press is stale", async () => {
    const { alice } = discord.fixtures;
    const dm = discord.openDm(alice);
    const asked = discord.postUserMessage({ channelId: dm, author: alice, content: 'book a table' });
    await waitFor(() => buttonsIn(dm) !== null, { what: 'the question with buttons' });
    const question = buttonsIn(dm);
    expect(Object.keys(question?.ids ?? {})).toEqual(['2', '4']);
    const press = discord.pressButton({ user: alice, channelId: dm, messageId: question?.messageId ?? '', customId: question?.ids['4'] ?? '' });
    await waitFor(() => discordRepliesIn(discord, dm).includes('Booked. (The user answered: 4)'), { what: 'the turn to finish with the pressed answer' });
    expect(discord.interactions.interactions.get(press)).toMatchObject({ callbackType: 6, messages: [] });
    // The answer went to the running turn: no turn of its own.
    expect(llm.requests.filter((r) => lastUserText(r) === '4')).toHaveLength(0);

    const late = discord.pressButton({ user: alice, channelId: dm, messageId: question?.messageId ?? '', customId: question?.ids['2'] ?? '' });
    const stale = await answered(late);
    expect(stale.messages.map((m) => [m.content, m.flags])).toEqual([['⌛ This button is no longer active (already used, answered, or expired).', 64]]);

    // Status reactions (DISCORD_STATUS_REACTIONS): 👀 taken, ⚙️ while the clarify tool ran, both off, then ✅.
    const onAsked = (): string[] => discord.reactions.filter((r) => r.messageId === String(asked.id)).map((r) => `${r.action === 'add' ? '+' : '-'}${r.emoji}`);
    await waitFor(() => onAsked().includes('+✅'), { what: 'the done reaction' });
    expect(onAsked()).toEqual(['+👀', '+⚙️', '-👀', '-⚙️', '+✅']);
  });

  it('/resume lists titled conversations as buttons; a press resumes, and only the person who asked may press', async () => {
    const { alice, bob, generalChannelId } = discord.fixtures;
    const dm = discord.openDm(alice);
    discord.postUserMessage({ channelId: dm, author: alice, content: '/new' });
    await waitFor(() => discordRepliesIn(discord, dm).some((t) => t.startsWith('✨ Started a new conversation')), { what: '/new answered' });
    discord.postUserMessage({ channelId: dm, author: alice, content: '/resume' });
    await waitFor(() => buttonsIn(dm)?.ids['Trip to Rome'] !== undefined, { what: 'the picker' });
    const picker = buttonsIn(dm);
    discord.pressButton({ user: alice, channelId: dm, messageId: picker?.messageId ?? '', customId: picker?.ids['Trip to Rome'] ?? '' });
    await waitFor(() => discordRepliesIn(discord, dm).some((t) => t.startsWith('▶️ Resumed “Trip to Rome”')), { what: 'the resume' });

    // In a thread both can see the picker: Bob's press is refused with a note only he sees.
    const opener = discord.postUserMessage({ channelId: generalChannelId, author: alice, content: `<@${discord.bot.id}> hello thread` });
    const thread = String(opener.id);
    await waitFor(() => discordRepliesIn(discord, thread).includes('ok: hello thread'), { what: 'the thread answer' });
    discord.postUserMessage({ channelId: thread, author: alice, content: '/resume' });
    await waitFor(() => buttonsIn(thread) !== null, { what: 'the picker in the thread' });
    const inThread = buttonsIn(thread);
    const foreign = await answered(
      discord.pressButton({ user: bob, channelId: thread, messageId: inThread?.messageId ?? '', customId: inThread?.ids['Trip to Rome'] ?? '' }),
    );
    expect(foreign.messages.map((m) => [m.content, m.flags])).toEqual([['🙅 These buttons are for the person who asked; yours would not count.', 64]]);
    expect(discordRepliesIn(discord, thread).some((t) => t.startsWith('▶️'))).toBe(false);
  });
});
