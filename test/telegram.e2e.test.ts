/**
 * Telegram acceptance (issue 5): the real gateway process, real Redis, the Telegram Bot API stand-in (telegraf
 * inside the gateway) and the OpenAI stand-in (the openai SDK inside the gateway). Users are driven through the
 * stand-in exactly as Telegram delivers their messages; assertions read what the bot sent, the SQLite file and
 * Redis.
 *
 * Proving "nothing happened" without sleeping: a later message in the same conversation is answered only after
 * everything before it was handled (ingress keeps per-conversation order, workers one turn at a time), so its
 * reply is the barrier after which a wrongly answered earlier message would already show.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { helpText, menuCommands } from '../apps/gateway/src/edges/commands/registry.js';
import { imagesOf, startFakeOpenAI, type FakeLLM, type Step } from './fakes/llm/index.js';
import { startTelegramFake, telegramErrors, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { readStoreFile } from './helpers/store-rows.js';
import { lastUserText } from './helpers/llm-tags.js';
import { freePort, waitFor } from './helpers/ports.js';
import { clientSplitText, codeBlocksOf, messageIdOf, postUpdate, privateTextUpdate, repliesIn, sentIn, telegramEnv } from './helpers/telegram.js';

const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;
const WEBHOOK_PATH = '/telegram/webhook';
const WEBHOOK_SECRET = 'e2e-webhook_secret-42';

interface SessionRow {
  id: string;
  key: string;
  source: string;
  user_id: string | null;
  chat_id: string | null;
}

function sessionsWhere(dbPath: string, keyLike: string): SessionRow[] {
  return readStoreFile(
    dbPath,
    (db) => db.prepare('SELECT id, key, source, user_id, chat_id FROM sessions WHERE key LIKE ? ORDER BY key').all(keyLike) as SessionRow[],
  );
}

function transcript(dbPath: string, sessionId: string): Array<{ role: string; content: string | null }> {
  return readStoreFile(
    dbPath,
    (db) => db.prepare('SELECT role, content FROM messages WHERE session_id = ? ORDER BY id').all(sessionId) as Array<{ role: string; content: string | null }>,
  );
}

/** The keys under `prefix:`, without it: the prefix carries the test's pid and clock, whose digits may spell a chat id. */
async function redisKeys(prefix: string): Promise<string[]> {
  const redis = new Redis('redis://127.0.0.1:6379');
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch.map((k) => k.slice(prefix.length + 1)));
    } while (cursor !== '0');
    return keys;
  } finally {
    redis.disconnect();
  }
}

/** Answers scripted texts with scripted steps and everything else with `ok: <text>`, as the default does. */
function scriptedByText(llm: FakeLLM, answers: Map<string, Step>): void {
  llm.respondWith((req) => {
    const text = lastUserText(req);
    return answers.get(text) ?? { text: `ok: ${text}` };
  });
}

/** A 10,000-character Markdown answer whose 110-line TypeScript block must straddle a chunk boundary. */
function longAnswer(): { text: string; codeLines: string[] } {
  const prose = (label: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${label} ${i + 1}: the quick brown fox jumps over the lazy dog, again and again.`);
  const codeLines = Array.from({ length: 110 }, (_, i) => `const line${String(i + 1).padStart(3, '0')} = compute(${i}, "value ${i}");`);
  const body = ['# Long answer', ...prose('Paragraph', 40), '```ts', ...codeLines, '```', ...prose('Closing', 30)].join('\n');
  const tail = '\nThe end.';
  const fillerLength = 10_000 - body.length - 1 - tail.length;
  if (fillerLength < 10) throw new Error(`long answer is ${body.length} characters already`);
  const filler = 'and some filler words'.padEnd(fillerLength, ' more words').slice(0, fillerLength);
  return { text: `${body}\n${filler}${tail}`, codeLines };
}

/**
 * A 5,000-character text sent as the two parts a Telegram client makes of it, then a short message once it is
 * answered: the parts are one LLM request with the whole text and one reply; the short message is a turn of its own
 * (its reply is also the barrier after which a reply to a part alone would already show).
 */
async function splitTextIsOneTurn(tg: TelegramFake, llm: FakeLLM, answers: Map<string, Step>, chat: number): Promise<void> {
  const { full, parts } = clientSplitText(`chat ${chat}`, 5_000);
  expect(parts.map((p) => p.length > TELEGRAM_MAX_MESSAGE_LENGTH / 2 && p.length <= TELEGRAM_MAX_MESSAGE_LENGTH)).toEqual([true, false]);
  answers.set(full, { text: 'got the whole text' });
  for (const text of parts) tg.injectMessage({ chatId: chat, userId: chat, text });
  await waitFor(() => repliesIn(tg, chat).length >= 1, { what: 'the answer to the split text' });
  tg.injectMessage({ chatId: chat, userId: chat, text: 'short follow-up' });
  await waitFor(() => repliesIn(tg, chat).length >= 2, { what: 'the answer to the follow-up' });

  expect(repliesIn(tg, chat)).toEqual(['got the whole text', 'ok: short follow-up']);
  expect(llm.requests.filter((r) => lastUserText(r).includes(parts[1])).map(lastUserText)).toEqual([full]);
  expect(llm.requests.filter((r) => lastUserText(r) === 'short follow-up')).toHaveLength(1);
}

describe('telegram through the gateway (long polling)', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let cluster: Cluster;
  const answers = new Map<string, Step>();
  const mention = (): string => `@${tg.bot.username}`;

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    scriptedByText(llm, answers);
    // The model here answers at once, within HERALD_TYPING_DELAY_MS: typing is shown at once so the tests can see it.
    cluster = await startCluster({ workers: 0, env: telegramEnv(tg, llm, { HERALD_TYPING_DELAY_MS: '0' }) });
  });
  afterAll(async () => {
    await cluster?.stop();
    await llm?.close();
    await tg?.close();
  });

  it('publishes the gateway commands as the bot menu at start-up', async () => {
    const expected = menuCommands().map((c) => ({ command: c.name, description: c.description }));
    await waitFor(() => tg.callsOf('setMyCommands').some((c) => c.status === 200), { what: 'setMyCommands' });
    expect(tg.commands).toEqual(expected);
  });

  it('answers a private "hello" from user 42 in chat 42 with the LLM text, in a telegram session keyed by the DM', async () => {
    const update = tg.injectMessage({ chatId: 42, userId: 42, text: 'hello' });
    const userMessageId = messageIdOf(update);
    await waitFor(() => repliesIn(tg, 42).length >= 1, { what: 'the reply in chat 42' });

    const [reply] = sentIn(tg, 42);
    expect(reply.text).toBe('ok: hello');
    expect(reply.reply_to_message_id).toBe(userMessageId);
    expect(repliesIn(tg, 42)).toEqual(['ok: hello']);
    // The user saw "typing…" while the agent worked (sent without waiting for it, so poll rather than race it).
    await waitFor(() => sentIn(tg, 42, { method: 'sendChatAction' }).some((s) => s.action === 'typing'), { what: 'typing in chat 42' });

    const sessions = sessionsWhere(cluster.dbPath, 'agent:main:telegram:dm:42');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ key: 'agent:main:telegram:dm:42', source: 'telegram', user_id: '42', chat_id: '42' });
    expect(transcript(cluster.dbPath, sessions[0].id)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'ok: hello' },
    ]);
  });

  it('answers an update delivered twice (and its message re-sent in a new update) once', async () => {
    const first = tg.injectMessage({ chatId: 43, userId: 43, text: 'only once please' });
    tg.redeliver(first); // same update_id: Telegram resending an unconfirmed update
    tg.injectUpdate({ message: first.message }); // same message in a new update: a webhook/poller replay
    await waitFor(() => repliesIn(tg, 43).length >= 1, { what: 'the first reply' });
    tg.injectMessage({ chatId: 43, userId: 43, text: 'and now something else' });
    await waitFor(() => repliesIn(tg, 43).length >= 2, { what: 'the barrier reply' });

    expect(repliesIn(tg, 43)).toEqual(['ok: only once please', 'ok: and now something else']);
    expect(llm.requests.filter((r) => lastUserText(r) === 'only once please')).toHaveLength(1);
  });

  it('takes a 5,000-character text the Telegram client sent in two parts as one message: one request, one answer', async () => {
    await splitTextIsOneTurn(tg, llm, answers, 46);
  });

  it('splits a 10,000-character answer into 3 messages of at most 4,096 characters, code blocks intact in each', async () => {
    const { text, codeLines } = longAnswer();
    expect(text).toHaveLength(10_000);
    answers.set('write me something long', { text });
    tg.injectMessage({ chatId: 44, userId: 44, text: 'write me something long' });
    await waitFor(() => sentIn(tg, 44).length >= 3, { what: 'three chunks' });

    const chunks = sentIn(tg, 44);
    expect(chunks).toHaveLength(3);
    chunks.forEach((c, i) => {
      expect(c.text!.length).toBeLessThanOrEqual(TELEGRAM_MAX_MESSAGE_LENGTH);
      expect(c.parse_mode).toBe('HTML');
      expect(c.text!.endsWith(`(${i + 1}/3)`)).toBe(true);
      // A fence left open or unopened would show its backticks as text.
      expect(c.text).not.toContain('```');
    });
    // Fences balanced: the code block is closed at the end of one message and reopened (still TypeScript) in the
    // next, so every code line shows as code, in order, exactly once, and no prose is swallowed into code.
    const blocks = chunks.flatMap((c) => codeBlocksOf(tg, c));
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const b of blocks) expect(b.language).toBe('ts');
    expect(blocks.flatMap((b) => b.code.split('\n'))).toEqual(codeLines);
    const prose = chunks.map((c) => c.text!).join('\n');
    expect(prose).toContain('Paragraph 40:');
    expect(prose).toContain('Closing 30:');
    expect(chunks[0].text!.startsWith('Long answer\nParagraph 1:')).toBe(true);
    expect(chunks[2].text).toContain('The end.');
    // Only the first part replies to the question; the rest follow it.
    expect(chunks.map((c) => c.reply_to_message_id !== undefined)).toEqual([true, false, false]);
  });

  it('in a group: ignores messages not addressed to the bot, answers a mention and a reply to the bot', async () => {
    const group = -1001001;
    const user = 501;
    tg.injectMessage({ chatId: group, userId: user, text: 'just chatting among ourselves' });
    tg.injectMessage({ chatId: group, userId: user, text: `${mention()} hi` });
    await waitFor(() => repliesIn(tg, group).length >= 1, { what: 'the answer to the mention' });
    expect(repliesIn(tg, group)).toEqual(['ok: hi']);

    const botMessage = sentIn(tg, group)[0].message_id!;
    tg.injectMessage({ chatId: group, userId: user, text: 'tell me more', replyTo: botMessage });
    await waitFor(() => repliesIn(tg, group).length >= 2, { what: 'the answer to the reply' });

    expect(repliesIn(tg, group)).toEqual(['ok: hi', 'ok: tell me more']);
    const seen = llm.requests.map((r) => r.rawBody);
    expect(seen.some((b) => b.includes('just chatting among ourselves'))).toBe(false);
    // A reply chain in a plain supergroup is not a topic: the answer goes to the chat itself.
    expect(sentIn(tg, group).every((s) => s.message_thread_id === undefined)).toBe(true);
    expect(sessionsWhere(cluster.dbPath, `agent:main:telegram:group:${group}:%`).map((s) => s.key)).toEqual([`agent:main:telegram:group:${group}:${user}`]);
  });

  it('in a group: answers a menu command addressed to the bot at once, without the LLM, and ignores one for another bot', async () => {
    const group = -1001004;
    const requestsBefore = llm.requests.length;
    tg.injectMessage({ chatId: group, userId: 511, text: '/help@some_other_bot' });
    tg.injectMessage({ chatId: group, userId: 511, text: `/help${mention()}` });
    await waitFor(() => repliesIn(tg, group).length >= 1, { what: 'the /help answer' });

    expect(repliesIn(tg, group)).toEqual([helpText()]);
    expect(llm.requests.length).toBe(requestsBefore);
  });

  it('gives two users of one group two sessions', async () => {
    const group = -1001002;
    const a = tg.injectMessage({ chatId: group, userId: 601, text: `${mention()} I am Ann` });
    const b = tg.injectMessage({ chatId: group, userId: 602, text: `${mention()} I am Bob` });
    await waitFor(() => repliesIn(tg, group).length >= 2, { what: 'both answers' });

    const byReplyTo = new Map(sentIn(tg, group).map((s) => [s.reply_to_message_id, s.text]));
    expect(byReplyTo.get(messageIdOf(a))).toBe('ok: I am Ann');
    expect(byReplyTo.get(messageIdOf(b))).toBe('ok: I am Bob');
    const sessions = sessionsWhere(cluster.dbPath, `agent:main:telegram:group:${group}:%`);
    expect(sessions.map((s) => [s.key, s.source, s.user_id])).toEqual([
      [`agent:main:telegram:group:${group}:601`, 'telegram', '601'],
      [`agent:main:telegram:group:${group}:602`, 'telegram', '602'],
    ]);
    // Bob's conversation does not carry Ann's words.
    const bob = transcript(cluster.dbPath, sessions[1].id)
      .map((m) => m.content)
      .join('\n');
    expect(bob).not.toContain('Ann');
  });

  it('answers forum topic messages in the same topic, with the topic in the session key (General included)', async () => {
    const forum = -1001003;
    const user = 701;
    const topic = tg.createTopic(forum, 'Planning', user);
    tg.injectMessage({ chatId: forum, userId: user, threadId: topic, text: `${mention()} plan the trip` });
    await waitFor(() => sentIn(tg, forum).length >= 1, { what: 'the answer in the topic' });
    tg.injectMessage({ chatId: forum, userId: user, isForum: true, text: `${mention()} general question` });
    await waitFor(() => sentIn(tg, forum).length >= 2, { what: 'the answer in General' });

    expect(sentIn(tg, forum, { threadId: topic }).map((s) => s.text)).toEqual(['ok: plan the trip']);
    // General refuses its own id when sending: the answer goes without one, which Telegram files under General.
    expect(sentIn(tg, forum, { threadId: null }).map((s) => s.text)).toEqual(['ok: general question']);
    // "typing…" shows in the topic the user wrote in; in General only when id 1 is named.
    const typingThreads = (): Set<number | undefined> => new Set(sentIn(tg, forum, { method: 'sendChatAction' }).map((s) => s.message_thread_id));
    await waitFor(() => typingThreads().size >= 2, { what: 'typing in both topics' });
    expect(typingThreads()).toEqual(new Set([topic, 1]));
    expect(sessionsWhere(cluster.dbPath, `agent:main:telegram:group:${forum}:%`).map((s) => s.key)).toEqual(
      [`agent:main:telegram:group:${forum}:${topic}:${user}`, `agent:main:telegram:group:${forum}:1:${user}`].sort(),
    );
  });

  it('delivers an answer as plain text when Telegram rejects its HTML', async () => {
    const chat = 45;
    const answer = '**Bold** claim with `code` and a [link](https://example.com)';
    answers.set('format this', { text: answer });
    tg.failNext('sendMessage', telegramErrors.cantParseEntities('Unsupported start tag "b" at byte offset 0'), 1, (p) => {
      return p.parse_mode === 'HTML' && String(p.chat_id) === String(chat);
    });
    tg.injectMessage({ chatId: chat, userId: chat, text: 'format this' });
    await waitFor(() => sentIn(tg, chat).length >= 1, { what: 'the plain-text answer' });

    const calls = tg.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(chat));
    expect(calls.map((c) => [c.status, c.params.parse_mode])).toEqual([
      [400, 'HTML'],
      [200, undefined],
    ]);
    // The user gets the whole answer once, as written, and no "could not deliver" notice.
    expect(sentIn(tg, chat).map((s) => [s.text, s.parse_mode])).toEqual([[answer, undefined]]);
  });

  it('without speech-to-text a voice note gets one line saying so, and the model is not asked', async () => {
    const chat = 48;
    tg.injectMessage({ chatId: chat, userId: chat, voice: { content: 'OggS hello there' } });
    await waitFor(() => repliesIn(tg, chat).length >= 1, { what: 'the notice' });
    expect(repliesIn(tg, chat)).toEqual(['⚠️ voice message: voice messages and audio cannot be transcribed here (no speech-to-text model is set up).']);
    // Nothing lost: a text in the same conversation afterwards is answered as usual.
    tg.injectMessage({ chatId: chat, userId: chat, text: 'can you hear me' });
    await waitFor(() => repliesIn(tg, chat).length >= 2, { what: 'the next answer' });
    expect(repliesIn(tg, chat)[1]).toBe('ok: can you hear me');
    expect(llm.requests.some((r) => JSON.stringify(r.body).includes('hello there'))).toBe(false);
  });

  it('a model without vision and no vision model: the photo gets one line saying so, the caption is still answered', async () => {
    const chat = 49;
    tg.injectMessage({ chatId: chat, userId: chat, text: '/model openai:gpt-3.5-turbo' });
    await waitFor(() => repliesIn(tg, chat).length >= 1, { what: 'the model switch' });
    const downloads = tg.callsOf('getFile').length;
    tg.injectMessage({ chatId: chat, userId: chat, caption: 'what is on it', photo: true });
    await waitFor(() => repliesIn(tg, chat).length >= 3, { what: 'the notice and the answer' });
    expect(repliesIn(tg, chat).slice(1)).toEqual([
      '⚠️ photo: openai:gpt-3.5-turbo cannot see images, so the picture was not passed on.',
      expect.stringContaining('what is on it'),
    ]);
    const asked = llm.requests.find((r) => lastUserText(r).includes('what is on it'))!;
    expect(imagesOf(asked)).toHaveLength(0);
    // Not even fetched: there was no one to show it to.
    expect(tg.callsOf('getFile')).toHaveLength(downloads);
  });
});

describe('telegram through the gateway (webhook)', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let cluster: Cluster;
  let hookUrl: string;
  const answers = new Map<string, Step>();

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    scriptedByText(llm, answers);
    // The webhook URL must name the gateway's own port before it starts, so pick the port here.
    const port = await freePort();
    hookUrl = `http://127.0.0.1:${port}${WEBHOOK_PATH}`;
    cluster = await startCluster({
      workers: 0,
      env: telegramEnv(tg, llm, { HERALD_PORT: String(port), TELEGRAM_WEBHOOK_URL: hookUrl, TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET }),
    });
    await waitFor(() => tg.webhook, { what: 'setWebhook' });
  });
  afterAll(async () => {
    await cluster?.stop();
    await llm?.close();
    await tg?.close();
  });

  it('registers the webhook with its secret and answers updates Telegram posts with it', async () => {
    expect(tg.webhook).toMatchObject({ url: hookUrl, secret_token: WEBHOOK_SECRET, allowed_updates: ['message', 'callback_query'] });
    tg.injectMessage({ chatId: 801, userId: 801, text: 'hi over the webhook' });
    await waitFor(() => repliesIn(tg, 801).length >= 1, { what: 'the answer' });

    expect(repliesIn(tg, 801)).toEqual(['ok: hi over the webhook']);
    expect(tg.webhookDeliveries.filter((d) => d.status !== 200)).toEqual([]);
    expect(tg.callsOf('getUpdates')).toEqual([]); // webhook mode never polls
    expect(tg.commands).toEqual(menuCommands().map((c) => ({ command: c.name, description: c.description })));
  });

  it('takes an album Telegram posts part by part (each after the last was answered) as one turn with every picture', async () => {
    const chat = 806;
    tg.injectMessage({ chatId: chat, userId: chat, caption: 'album over the webhook', photo: true, mediaGroupId: 'hook-album' });
    tg.injectMessage({ chatId: chat, userId: chat, photo: true, mediaGroupId: 'hook-album' });
    tg.injectMessage({ chatId: chat, userId: chat, photo: true, mediaGroupId: 'hook-album' });
    await waitFor(() => repliesIn(tg, chat).length >= 1, { what: 'the album answer' });
    // Each part was answered (200) before Telegram posted the next one.
    await waitFor(() => tg.pendingUpdates() === 0, { what: 'all parts delivered' });
    expect(tg.webhookDeliveries.filter((d) => d.status !== 200)).toEqual([]);
    const asked = llm.requests.filter((r) => lastUserText(r).includes('album over the webhook'));
    expect(asked).toHaveLength(1);
    expect(imagesOf(asked[0])).toHaveLength(3);
    expect(lastUserText(asked[0])).toContain('[Image: photo 3]');
    expect(repliesIn(tg, chat)).toHaveLength(1);
  });

  it('takes a 5,000-character text Telegram posts in two parts (the second after the first was answered) as one message', async () => {
    await splitTextIsOneTurn(tg, llm, answers, 807);
    // Each part was answered at once (200): Telegram could post the next one.
    expect(tg.pendingUpdates()).toBe(0);
    expect(tg.webhookDeliveries.filter((d) => d.status !== 200)).toEqual([]);
  });

  it('refuses a wrong or missing secret with 401: no job, no mailbox entry, no LLM request', async () => {
    const chat = 802;
    const forged = privateTextUpdate({ updateId: 900_000_001, chatId: chat, messageId: 9, text: 'forged order' });
    const wrongSecrets = ['not-the-secret', `${WEBHOOK_SECRET.slice(0, -1)}X`, `${WEBHOOK_SECRET}X`, WEBHOOK_SECRET.slice(0, -1), ''];
    for (const [i, secret] of wrongSecrets.entries()) {
      expect((await postUpdate(hookUrl, { ...forged, update_id: 900_000_010 + i }, secret)).status, `secret "${secret}"`).toBe(401);
    }
    const missing = await postUpdate(hookUrl, { ...forged, update_id: 900_000_002 });
    expect(missing.status).toBe(401);

    // Nothing about that chat reached Redis: no seen marker, mailbox, session lock or BullMQ job (keys that name the
    // chat as one of their `:`- or `.`-separated parts, as `mbox:agent:main:telegram:dm:802` and `seen:telegram.802.9` do).
    const namesChat = (key: string): boolean => key.split(/[:.]/).includes(String(chat));
    expect((await redisKeys(cluster.prefix)).filter(namesChat)).toEqual([]);

    // The same user then writes for real: answered, and the forged text never reached the agent.
    tg.injectMessage({ chatId: chat, userId: chat, text: 'the real me' });
    await waitFor(() => repliesIn(tg, chat).length >= 1, { what: 'the real answer' });
    expect(repliesIn(tg, chat)).toEqual(['ok: the real me']);
    expect(llm.requests.some((r) => r.rawBody.includes('forged order'))).toBe(false);
    expect((await redisKeys(cluster.prefix)).filter((k) => k.includes(`telegram.${chat}.9`))).toEqual([]);
  });
});
