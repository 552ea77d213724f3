/**
 * Issue 6, end to end: the real gateway process (real discord.js inside it) against the Discord stand-in, the
 * OpenAI stand-in and real Redis. Everything is driven the way a person would use Discord, and checked on what
 * the stand-in recorded and in the SQLite file.
 *
 * One gateway serves the whole file (each start costs seconds), but no test depends on another's state: each opens
 * its own thread or DM. The restart test runs last and swaps in a new process on the same database and Redis prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake } from './fakes/discord/index.js';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { discordEnv, discordRepliesIn, mentionBot, replayWasDropped, waitForDiscordReady } from './helpers/discord.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { readStoreFile } from './helpers/store-rows.js';

const DISCORD_LIMIT = 2000;
const LONG_ANSWER_LENGTH = 5000;
const LONG_ANSWER_PROMPT = 'send me the whole script';
/** discord.js keeps the last 10 messages per channel (the adapter's MESSAGE_CACHE_PER_CHANNEL); 5 exchanges push one out. */
const EXCHANGES_TO_EVICT = 5;

/** A 5,000-character answer whose code fence cannot fit in one Discord message. */
function longAnswer(): string {
  const lines = ['Here is the whole script:', '', '```python'];
  for (let i = 1; lines.join('\n').length < LONG_ANSWER_LENGTH - 200; i++) {
    lines.push(`print("line ${String(i).padStart(3, '0')}: the quick brown fox jumps over the lazy dog")`);
  }
  lines.push('```', '');
  const head = lines.join('\n');
  const outro = 'That is all of it.';
  return head + outro + '.'.repeat(LONG_ANSWER_LENGTH - head.length - outro.length);
}
const LONG_ANSWER = longAnswer();

function respond(req: RecordedRequest): Step {
  const text = lastUserText(req);
  if (text === 'what is 2+2?') return { text: '2 + 2 = 4.' };
  if (text === LONG_ANSWER_PROMPT) return { text: LONG_ANSWER };
  return { text: `ok: ${text}` };
}

interface SessionRow {
  id: string;
  key: string;
  source: string;
  chat_id: string | null;
  user_id: string | null;
}

describe('discord through the real gateway (issue 6)', () => {
  let discord: DiscordFake;
  let llm: FakeLLM;
  let cluster: Cluster;
  let env: Record<string, string>;
  /** The running gateway: the cluster's process, or its replacement after the restart test. */
  let gateway: GatewayProcess;
  let restarted: GatewayProcess | null = null;

  beforeAll(async () => {
    discord = await startDiscordFake();
    llm = await startFakeOpenAI();
    llm.respondWith(async (req) => respond(req));
    // debug: each dropped redelivery is logged, which shows the RESUME test really replayed the message.
    env = discordEnv(discord, llm, { HERALD_LOG_LEVEL: 'debug' });
    cluster = await startCluster({ workers: 0, env });
    gateway = cluster.ingress;
    await waitForDiscordReady(gateway);
  });

  afterAll(async () => {
    await restarted?.stop();
    await cluster?.stop();
    await discord?.close();
    await llm?.close();
  });

  function sessionsWithKey(key: string): SessionRow[] {
    return readStoreFile(
      cluster.dbPath,
      (db) => db.prepare('SELECT id, key, source, chat_id, user_id FROM sessions WHERE key = ? ORDER BY started_at').all(key) as SessionRow[],
    );
  }

  function transcript(sessionId: string): Array<{ role: string; content: string | null }> {
    return readStoreFile(
      cluster.dbPath,
      (db) =>
        db.prepare('SELECT role, content FROM messages WHERE session_id = ? ORDER BY id').all(sessionId) as Array<{ role: string; content: string | null }>,
    );
  }

  const requestsMentioning = (text: string): RecordedRequest[] => llm.requests.filter((r) => r.rawBody.includes(text));

  async function waitForReplies(channelId: string, count: number, what: string): Promise<string[]> {
    return waitFor(() => (discordRepliesIn(discord, channelId).length >= count ? discordRepliesIn(discord, channelId) : null), {
      timeoutMs: 20_000,
      what,
    });
  }

  /** Waits for the gateway's own word that it decided to ignore this message (a debug line naming its id). */
  async function ignoredByGateway(messageId: string): Promise<void> {
    await gateway.waitForLog((l) => l.msg === 'discord message ignored' && l.messageId === messageId, `message ${messageId} to be ignored`);
  }

  /** A mention in the general channel, answered in the thread it opens; returns the thread id (the mention's id). */
  async function openThread(question: string): Promise<string> {
    const { generalChannelId, alice } = discord.fixtures;
    const posted = discord.postUserMessage({ channelId: generalChannelId, author: alice, content: mentionBot(discord, question) });
    await waitForReplies(String(posted.id), 1, `the answer to "${question}" in its thread`);
    return String(posted.id);
  }

  /** A later message in the DM, answered: every earlier message of that DM session has been decided by then. */
  async function dmBarrier(dm: string, author: { id: string }, text: string): Promise<void> {
    const before = discordRepliesIn(discord, dm).length;
    discord.postUserMessage({ channelId: dm, author: author as typeof discord.fixtures.alice, content: text });
    await waitForReplies(dm, before + 1, `the answer to "${text}"`);
  }

  const threadKey = (thread: string): string => `agent:main:discord:thread:${discord.fixtures.generalChannelId}:${thread}`;

  it('"<@bot> what is 2+2?" in a server channel opens a thread, answers in it, and records a discord session', async () => {
    const { generalChannelId, alice } = discord.fixtures;
    const posted = discord.postUserMessage({ channelId: generalChannelId, author: alice, content: mentionBot(discord, 'what is 2+2?') });
    const messageId = String(posted.id);

    const replies = await waitForReplies(messageId, 1, 'the answer in the new thread');
    expect(discord.threadsCreated.filter((t) => t.messageId === messageId)).toEqual([
      expect.objectContaining({ id: messageId, parentId: generalChannelId, messageId, name: 'what is 2+2?' }),
    ]);
    expect(replies).toEqual(['2 + 2 = 4.']);
    expect(discordRepliesIn(discord, generalChannelId)).toEqual([]);

    const sessions = sessionsWithKey(threadKey(messageId));
    expect(sessions).toEqual([expect.objectContaining({ source: 'discord', chat_id: generalChannelId })]);
    expect(transcript(sessions[0].id)).toEqual([
      { role: 'user', content: 'what is 2+2?' },
      { role: 'assistant', content: '2 + 2 = 4.' },
    ]);
  });

  it('a follow-up in a thread without a mention is answered in the same session', async () => {
    const thread = await openThread('what is 3+3?');
    const before = sessionsWithKey(threadKey(thread));
    discord.postUserMessage({ channelId: thread, author: discord.fixtures.alice, content: 'and times 3?' });

    expect(await waitForReplies(thread, 2, 'the answer to the follow-up')).toEqual(['ok: what is 3+3?', 'ok: and times 3?']);
    const after = sessionsWithKey(threadKey(thread));
    expect(after.map((s) => s.id)).toEqual(before.map((s) => s.id));
    expect(transcript(after[0].id).map((m) => m.content)).toEqual(['what is 3+3?', 'ok: what is 3+3?', 'and times 3?', 'ok: and times 3?']);
    // The model saw the earlier exchange: the conversation continued rather than starting over.
    const followUps = requestsMentioning('and times 3?');
    expect(followUps).toHaveLength(1);
    expect(followUps[0].rawBody).toContain('ok: what is 3+3?');
  });

  it('a channel message without a mention is ignored', async () => {
    const { generalChannelId, alice } = discord.fixtures;
    const ignored = discord.postUserMessage({ channelId: generalChannelId, author: alice, content: 'just chatting among ourselves' });
    await ignoredByGateway(String(ignored.id));

    expect(requestsMentioning('just chatting among ourselves')).toEqual([]);
    expect(discord.threadsCreated.map((t) => t.messageId)).not.toContain(String(ignored.id));
    expect(discordRepliesIn(discord, generalChannelId)).toEqual([]);
    expect(sessionsWithKey(`agent:main:discord:channel:${generalChannelId}:${alice.id}`)).toEqual([]);
  });

  it('a DM without a mention is answered, in a discord DM session', async () => {
    const { alice } = discord.fixtures;
    const dm = discord.openDm(alice);
    const already = discordRepliesIn(discord, dm).length;
    discord.postUserMessage({ channelId: dm, author: alice, content: 'hello in private' });

    expect((await waitForReplies(dm, already + 1, 'the DM answer')).slice(already)).toEqual(['ok: hello in private']);
    expect(sessionsWithKey(`agent:main:discord:dm:${dm}`)).toEqual([expect.objectContaining({ source: 'discord', user_id: alice.id })]);
  });

  it('a 5,000-character answer arrives as 3 messages of at most 2,000 characters with balanced code fences', async () => {
    expect(LONG_ANSWER).toHaveLength(LONG_ANSWER_LENGTH);
    const { bob } = discord.fixtures;
    const dm = discord.openDm(bob);
    discord.postUserMessage({ channelId: dm, author: bob, content: LONG_ANSWER_PROMPT });

    const chunks = (await waitForReplies(dm, 3, 'the three parts of the long answer')).slice(0, 3);
    await dmBarrier(dm, bob, 'thanks for the script');
    expect(discordRepliesIn(discord, dm)).toEqual([...chunks, 'ok: thanks for the script']);
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.length).toBeLessThanOrEqual(DISCORD_LIMIT);
      const fences = chunk.split('\n').filter((line) => line.startsWith('```'));
      expect(fences.length % 2, `chunk ${i + 1} leaves a code fence open`).toBe(0);
      expect(chunk).toContain(`(${i + 1}/3)`);
    }
    // Nothing lost or repeated: every code line arrives once, in order, inside a python block.
    const codeLines = chunks
      .join('\n')
      .split('\n')
      .filter((l) => l.startsWith('print('));
    expect(codeLines).toEqual(LONG_ANSWER.split('\n').filter((l) => l.startsWith('print(')));
    expect(chunks[1].startsWith('```python\n')).toBe(true);
    expect(chunks[2]).toContain('That is all of it.');
  });

  it('a MESSAGE_CREATE that Discord replays after a RESUME is answered once, also when it has left the client cache', async () => {
    const { alice } = discord.fixtures;
    const dm = discord.openDm(alice);
    const already = discordRepliesIn(discord, dm).length;
    const posted = discord.postUserMessage({ channelId: dm, author: alice, content: 'count this once' });
    await waitForReplies(dm, already + 1, 'the first answer');
    // A busy conversation: enough exchanges after it that discord.js's own message cache (which would also swallow a
    // replayed MESSAGE_CREATE) has forgotten it, so only Herald's dedupe stands between the replay and a second turn.
    for (let i = 1; i <= EXCHANGES_TO_EVICT; i++) {
      discord.postUserMessage({ channelId: dm, author: alice, content: `chatter ${i}` });
      await waitForReplies(dm, already + 1 + i, `the answer to chatter ${i}`);
    }

    const resumes = discord.resumeCount;
    // The connection drops; on RESUME the stand-in sends everything since "count this once" again.
    expect(discord.dropConnections({ code: 4000, replay: 2 * (EXCHANGES_TO_EVICT + 1) })).toBe(1);
    await waitFor(() => discord.resumeCount > resumes && discord.liveConnections === 1, { what: 'the client to RESUME' });
    await waitFor(() => replayWasDropped(gateway, String(posted.id)), { what: 'the replayed "count this once" to reach the gateway' });
    discord.postUserMessage({ channelId: dm, author: alice, content: 'after the resume' });
    // Same DM session, so turns run in arrival order: a second turn for the replay would come before this answer.
    await waitForReplies(dm, already + EXCHANGES_TO_EVICT + 2, 'the answer after the resume');

    const chatter = Array.from({ length: EXCHANGES_TO_EVICT }, (_, i) => `ok: chatter ${i + 1}`);
    expect(discordRepliesIn(discord, dm).slice(already)).toEqual(['ok: count this once', ...chatter, 'ok: after the resume']);
    expect(llm.requests.filter((r) => lastUserText(r) === 'count this once')).toHaveLength(1);
  });

  it('a message from another bot is ignored, even when it mentions the bot', async () => {
    const { generalChannelId, otherBot } = discord.fixtures;
    const fromBot = discord.postUserMessage({ channelId: generalChannelId, author: otherBot, content: mentionBot(discord, 'hello from a bot') });
    await ignoredByGateway(String(fromBot.id));

    expect(requestsMentioning('hello from a bot')).toEqual([]);
    expect(discord.threadsCreated.map((t) => t.messageId)).not.toContain(String(fromBot.id));
  });

  it('the thread is remembered across a gateway restart: a follow-up without a mention is still answered', async () => {
    const thread = await openThread('remember this thread');
    const sessionIds = sessionsWithKey(threadKey(thread)).map((s) => s.id);
    const answered = discordRepliesIn(discord, thread).length;

    expect(await gateway.stop()).toBe(0);
    restarted = await startGateway({
      env: { ...env, HERALD_DB: cluster.dbPath, HERALD_REDIS_PREFIX: cluster.prefix },
      args: ['--role', 'all'],
    });
    gateway = restarted;
    await waitForDiscordReady(gateway);

    discord.postUserMessage({ channelId: thread, author: discord.fixtures.alice, content: 'still there after the restart?' });
    const replies = await waitForReplies(thread, answered + 1, 'the answer after the restart');
    expect(replies[answered]).toBe('ok: still there after the restart?');
    expect(sessionsWithKey(threadKey(thread)).map((s) => s.id)).toEqual(sessionIds);
    expect(
      transcript(sessionIds[0])
        .map((m) => m.content)
        .slice(-2),
    ).toEqual(['still there after the restart?', 'ok: still there after the restart?']);
  });
});
