/**
 * Conversation control with real processes: the gateway (`node apps/gateway/src/main.ts`) with real Redis and a
 * temp SQLite file, the Telegram stand-in (real telegraf inside the gateway), the OpenAI stand-in (real openai
 * SDK), and the real `herald pairing approve` command.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../packages/agent-core/src/store/index.js';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type JsonObject, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { isolatedEnv } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const BIN = resolve(import.meta.dirname, '../apps/gateway/bin/herald.js');

interface World {
  tg: TelegramFake;
  llm: FakeLLM;
  cluster: Cluster;
}

async function startWorld(env: Record<string, string>, respond: (req: RecordedRequest) => Step): Promise<World> {
  const tg = await startTelegramFake();
  const llm = await startFakeOpenAI();
  llm.respondWith(respond);
  try {
    const cluster = await startCluster({ workers: 0, env: telegramEnv(tg, llm, env) });
    return { tg, llm, cluster };
  } catch (err) {
    await Promise.all([tg.close(), llm.close()]);
    throw err;
  }
}

async function stopWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  await w.cluster.stop();
  await Promise.all([w.tg.close(), w.llm.close()]);
}

/** The request for `text` while it is still being answered. */
function inFlight(llm: FakeLLM, text: string): RecordedRequest | undefined {
  return llm.requests.find((r) => lastUserText(r) === text && r.endedAt === undefined);
}

function requestsFor(llm: FakeLLM, text: string): RecordedRequest[] {
  return llm.requests.filter((r) => lastUserText(r) === text);
}

async function nextReply(tg: TelegramFake, chatId: number, after: number, what: string, timeoutMs = 15_000): Promise<string> {
  await waitFor(() => repliesIn(tg, chatId).length > after, { timeoutMs, what });
  return repliesIn(tg, chatId)[after];
}

/** Sends a text and resolves with the next message the bot sends to that chat. */
async function ask(tg: TelegramFake, chatId: number, text: string, userId = chatId): Promise<string> {
  const before = repliesIn(tg, chatId).length;
  tg.injectMessage({ chatId, userId, text });
  return nextReply(tg, chatId, before, `an answer to "${text}" in chat ${chatId}`);
}

function sessionIdOf(status: string): string {
  const m = /Session ([0-9a-f-]{36})/.exec(status);
  if (!m) throw new Error(`no session id in: ${status}`);
  return m[1];
}

function herald(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, [BIN, ...args], { env: isolatedEnv(env) });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    proc.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      fail(new Error(`herald ${args.join(' ')} hung:\n${out}`));
    }, 30_000);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

/** Allowed users of the main gateway; anyone else is unknown to it. */
const ALLOWED = [101, 102, 103, 104, 105, 109];
const FLUSH_PROMPT = '[This conversation is about to be';
let answersTo2plus2 = 0;

/**
 * The stand-in model: slow for some texts, counted answers for others, usage figures for /usage. It looks at the
 * newest text only: a stopped question stays in history unanswered, so the next one arrives merged with it.
 */
function mainResponder(req: RecordedRequest): Step {
  const text = lastUserText(req).split('\n\n').at(-1) ?? '';
  if (text.includes(FLUSH_PROMPT)) return { text: 'nothing to save' };
  if (text.startsWith('slow')) return { text: `re: ${text}`, delayMs: 3_000 };
  if (text.startsWith('stuck')) return { text: `stale: ${text}`, delayMs: 20_000 };
  if (text.startsWith('q ')) return { text: `re: ${text}`, delayMs: 600 };
  if (text === 'what is 2+2') return { text: ++answersTo2plus2 === 1 ? 'five' : 'four' };
  if (text === 'usage probe') return { text: 're: usage probe', usage: { input: 2_500, output: 12 } };
  return { text: `re: ${text}` };
}

describe('conversation control (queue mode, allowlist + pairing)', () => {
  let w: World | undefined;
  beforeAll(async () => {
    w = await startWorld(
      {
        HERALD_BUSY_INPUT_MODE: 'queue',
        GATEWAY_ALLOW_ALL_USERS: 'false',
        TELEGRAM_ALLOWED_USERS: ALLOWED.join(','),
        HERALD_CONTEXT_WINDOW: '10000',
        // The worker's "turn ended" line (debug) tells the tests when a stopped turn has really finished.
        HERALD_LOG_LEVEL: 'debug',
      },
      mainResponder,
    );
  });
  afterAll(() => stopWorld(w));

  it('/status during a running turn answers at once, the turn goes on; /undo meanwhile is refused, not raced', async () => {
    const { tg, llm } = w!;
    tg.injectMessage({ chatId: 101, userId: 101, text: 'slow question' });
    await waitFor(() => inFlight(llm, 'slow question'), { what: 'the LLM request' });
    const status = await ask(tg, 101, '/status');
    expect(status).toContain('A task is running');
    expect(await ask(tg, 101, '/undo')).toMatch(/^⏳ Busy/);
    expect(inFlight(llm, 'slow question')).toBeDefined();
    expect(await nextReply(tg, 101, 2, 'the answer')).toBe('re: slow question');
    expect(requestsFor(llm, 'slow question')).toHaveLength(1);
    expect(requestsFor(llm, 'slow question')[0].aborted).toBe(false);
    // The worker lets go of the session a moment after the reply is out (it records the delivery first).
    await waitFor(async () => (await ask(tg, 101, '/status')).includes('Idle.'), { what: '/status to say Idle' });
  });

  it('/stop aborts the running LLM request, drops what waits, and no stale reply arrives', async () => {
    const { tg, llm, cluster } = w!;
    tg.injectMessage({ chatId: 102, userId: 102, text: 'stuck job' });
    await waitFor(() => inFlight(llm, 'stuck job'), { what: 'the LLM request' });
    tg.injectMessage({ chatId: 102, userId: 102, text: 'q waiting behind it' });
    // Telegram drops an update once the poller confirms it, which it does after handing it to the queue.
    await waitFor(() => tg.world.updates.length === 0, { what: 'the gateway to take the waiting message' });
    expect(await ask(tg, 102, '/stop@herald_test_bot')).toBe('⏹ Stopped. Dropped 1 queued message.');
    await waitFor(() => requestsFor(llm, 'stuck job')[0].aborted, { what: 'the aborted request' });
    // The stopped turn has run to its end (where a stale reply would have been sent) before we look.
    await cluster.ingress.waitForLog((l) => l.msg === 'turn ended' && l.abort === 'stop', 'the stopped turn to end');
    const replies = repliesIn(tg, 102);
    expect(replies.filter((r) => r.startsWith('stale:') || r.startsWith('re:'))).toEqual([]);
    expect(requestsFor(llm, 'q waiting behind it')).toHaveLength(0);
    expect(await ask(tg, 102, '/stop')).toBe('No active task to stop.');
    // The session is usable again at once.
    expect(await ask(tg, 102, 'hello again')).toBe('re: hello again');
  });

  it('/new mid-turn stops the turn like /stop, ends the session (session_reset), and the next message starts a new one', async () => {
    const { tg, llm, cluster } = w!;
    expect(await ask(tg, 103, 'first words')).toBe('re: first words');
    const before = sessionIdOf(await ask(tg, 103, '/status'));
    tg.injectMessage({ chatId: 103, userId: 103, text: 'stuck again' });
    await waitFor(() => inFlight(llm, 'stuck again'), { what: 'the LLM request' });
    expect(await ask(tg, 103, '/new')).toMatch(/^✨ Started a new conversation/);
    await waitFor(() => requestsFor(llm, 'stuck again')[0].aborted, { what: 'the aborted request' });
    expect(await ask(tg, 103, 'after the reset')).toBe('re: after the reset');
    const after = sessionIdOf(await ask(tg, 103, '/status'));
    expect(after).not.toBe(before);
    expect(repliesIn(tg, 103).some((r) => r.startsWith('stale:'))).toBe(false);
    // The model saw a fresh conversation: nothing from before /new.
    const fresh = requestsFor(llm, 'after the reset')[0].body.messages as Array<{ content: unknown }>;
    expect(JSON.stringify(fresh)).not.toContain('first words');
    const store = await SessionStore.open(cluster.dbPath);
    try {
      expect(await store.getSession(before)).toMatchObject({ endReason: 'session_reset' });
      expect((await store.getSession(after))?.endedAt).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('an expired session (the daily reset): the next message is told first, starts afresh, and the old session ends', async () => {
    const { tg, llm, cluster } = w!;
    expect(await ask(tg, 109, 'old words')).toBe('re: old words');
    const before = sessionIdOf(await ask(tg, 109, '/status'));
    // Two days without activity, as the store would show them.
    const store = await SessionStore.open(cluster.dbPath);
    try {
      await store.sql.run('UPDATE messages SET created_at = created_at - ? WHERE session_id = ?', [2 * 86_400_000, before]);
      await store.sql.run('UPDATE sessions SET started_at = started_at - ? WHERE id = ?', [2 * 86_400_000, before]);
      const sent = repliesIn(tg, 109).length;
      tg.injectMessage({ chatId: 109, userId: 109, text: 'new words' });
      expect(await nextReply(tg, 109, sent, 'the reset notice')).toMatch(/^🌅 A new day, a fresh conversation/);
      expect(await nextReply(tg, 109, sent + 1, 'the answer')).toBe('re: new words');
      // The turn began in a new session; the model saw nothing from the old one.
      expect(JSON.stringify(requestsFor(llm, 'new words')[0].body.messages)).not.toContain('old words');
      expect(await store.getSession(before)).toMatchObject({ endReason: 'daily' });
      const after = sessionIdOf(await ask(tg, 109, '/status'));
      expect(after).not.toBe(before);
      // Current again: the next message gets no notice.
      expect(await ask(tg, 109, 'more words')).toBe('re: more words');
    } finally {
      await store.close();
    }
  });

  it('queue mode: three messages while busy are all answered in order; /queue x runs x after the running turn', async () => {
    const { tg, llm } = w!;
    tg.injectMessage({ chatId: 104, userId: 104, text: 'q one' });
    await waitFor(() => inFlight(llm, 'q one'), { what: 'the first request' });
    for (const t of ['q two', 'q three', 'q four']) tg.injectMessage({ chatId: 104, userId: 104, text: t });
    await waitFor(() => repliesIn(tg, 104).filter((r) => r.startsWith('re:')).length >= 4, { timeoutMs: 20_000, what: 'four answers' });
    expect(repliesIn(tg, 104).filter((r) => r.startsWith('re:'))).toEqual(['re: q one', 're: q two', 're: q three', 're: q four']);

    tg.injectMessage({ chatId: 104, userId: 104, text: 'slow work' });
    await waitFor(() => inFlight(llm, 'slow work'), { what: 'the slow request' });
    expect(await ask(tg, 104, '/queue and then this')).toBe('Queued (1 ahead of it).');
    expect(inFlight(llm, 'slow work')).toBeDefined(); // not interrupted
    await waitFor(() => repliesIn(tg, 104).includes('re: and then this'), { timeoutMs: 20_000, what: 'the queued answer' });
    const tail = repliesIn(tg, 104).filter((r) => r === 're: slow work' || r === 're: and then this');
    expect(tail).toEqual(['re: slow work', 're: and then this']);
  });

  it('an unknown user gets a pairing code in a DM and no LLM call; once approved they are answered; in a group, silence', async () => {
    const { tg, llm, cluster } = w!;
    const reply = await ask(tg, 901, 'hello, who are you?');
    const code = /^([ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8})$/m.exec(reply)?.[1];
    expect(code, reply).toBeDefined();
    expect(reply).toContain(`npx herald pairing approve telegram ${code}`);
    expect(requestsFor(llm, 'hello, who are you?')).toHaveLength(0);

    // A stranger in a group, addressing the bot: nothing at all, not even a code.
    tg.injectMessage({ chatId: -5000, userId: 902, text: '@herald_test_bot hello from the group' });
    // Commands are checked too: a stranger cannot stop or inspect anyone's conversation.
    tg.injectMessage({ chatId: -5000, userId: 902, text: '/status' });
    await waitFor(() => cluster.ingress.logs().filter((l) => l.msg === 'message from an unauthorised user ignored' && l.userId === '902').length === 2, {
      what: 'both group messages to be turned away',
    });
    expect(repliesIn(tg, -5000)).toEqual([]);
    expect(llm.requests.some((r) => lastUserText(r).includes('hello from the group'))).toBe(false);

    const approved = await herald(['pairing', 'approve', 'telegram', code!.toLowerCase()], { HERALD_DB: cluster.dbPath });
    expect(approved.code, approved.out).toBe(0);
    expect(await ask(tg, 901, 'hello again')).toBe('re: hello again');
  });

  it('/retry asks the last question again in place of the old answer; /undo removes it; /usage shows how full the context is', async () => {
    const { tg, llm } = w!;
    expect(await ask(tg, 105, 'what is 2+2')).toBe('five');
    expect(await ask(tg, 105, '/retry')).toBe('four');
    const retried = requestsFor(llm, 'what is 2+2');
    expect(retried).toHaveLength(2);
    // The first exchange was removed before asking again: the model sees the question once, no "five".
    const sent = JSON.stringify(retried[1].body.messages);
    expect(sent.split('what is 2+2')).toHaveLength(2);
    expect(sent).not.toContain('five');

    expect(await ask(tg, 105, '/undo')).toBe('↩️ Removed your last message “what is 2+2” and the reply.');
    expect(await ask(tg, 105, 'usage probe')).toBe('re: usage probe');
    expect(JSON.stringify(requestsFor(llm, 'usage probe')[0].body.messages)).not.toContain('2+2');

    const usage = await ask(tg, 105, '/usage');
    expect(usage).toContain('Context: 2,500 / 10,000 tokens (25%)');
    expect(usage).toMatch(/API calls: 3\b/); // what is 2+2, its retry, the probe
    expect(usage).toContain('Compressions: 0');
  });
});

describe('streaming replies', () => {
  let w: World | undefined;
  const answer = Array.from({ length: 24 }, (_, i) => `word${i}`).join(' ');
  beforeAll(async () => {
    w = await startWorld({ HERALD_STREAMING: 'true' }, () => ({ text: answer, chunkDelayMs: 120 }));
  });
  afterAll(() => stopWorld(w));

  it('streams by editing one message, and the chat ends with exactly one copy of the answer', async () => {
    const { tg } = w!;
    // A Bot API server without sendMessageDraft (before 9.3): private chats stream by editing in place, as groups
    // do (drafts are covered in telegram-native.e2e.test.ts).
    tg.supportDrafts(false);
    tg.injectMessage({ chatId: 201, userId: 201, text: 'tell me twenty-four words' });
    const finalEdits = () => tg.sent.filter((s) => s.method === 'editMessageText' && s.chat_id === '201' && s.text === answer);
    await waitFor(() => finalEdits().length >= 1, { timeoutMs: 20_000, what: 'the final edit' });
    const editsOfFirst = tg.sent.filter((s) => s.method === 'editMessageText' && s.chat_id === '201').length;
    // A second question in the same chat: turns run in order, so a duplicate copy of the first answer would be
    // in the chat before the second answer is finished.
    tg.injectMessage({ chatId: 201, userId: 201, text: 'and again' });
    await waitFor(() => finalEdits().length >= 2, { timeoutMs: 20_000, what: 'the final edit of the second answer' });
    const botMessages = [...(tg.world.chats.get(201)?.messages.values() ?? [])].filter((m) => (m.from as JsonObject | undefined)?.id === tg.bot.id);
    expect(botMessages.map((m) => m.text)).toEqual([answer, answer]); // one message per answer, edited in place
    expect(repliesIn(tg, 201)).toHaveLength(2); // one sendMessage each, then edits
    expect(editsOfFirst).toBeGreaterThan(1);
  });
});
