/**
 * Scheduled tasks end to end: the real gateway, real Redis (BullMQ job schedulers) and SQLite, the Telegram stand-in
 * and the OpenAI stand-in scripted to call the `schedule` tool. BullMQ's timing is real: one-offs are set a few
 * milliseconds ahead and the test waits for what they deliver, never for a duration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../packages/agent-core/src/store/index.js';
import { loadConfig } from '../apps/gateway/src/support/config/load.js';
import { openSchedules } from '../apps/gateway/src/features/schedules/index.js';
import { SCHEDULE_QUEUE } from '../apps/gateway/src/features/schedules/service.js';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, startCluster, uniquePrefix, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { sentIn } from './helpers/telegram.js';

const ADMIN_TOKEN = 'admin-token-for-schedules-0123';
const SOON = 0.0005; // in_minutes: 30 ms ahead

type Script = (step: number, req: RecordedRequest) => Step | Promise<Step>;
const scripts = new Map<string, Script>();
const messagesOf = (req: RecordedRequest): Array<{ role: string; content: string | null }> =>
  (req.body.messages ?? []) as Array<{ role: string; content: string | null }>;
/** The user text of a turn; a due task's message is answered by the tag of its prompt (the line after the header). */
function turnText(req: RecordedRequest): string {
  const text = lastUserText(req).replace(/\s*<memory>[\s\S]*?<\/memory>$/, '');
  return text.startsWith('[Scheduled task ') ? text.slice(text.indexOf('\n') + 1) : text;
}
function stepOf(req: RecordedRequest): number {
  const messages = messagesOf(req);
  return messages.slice(messages.map((m) => m.role).lastIndexOf('user') + 1).filter((m) => m.role === 'assistant').length;
}
const toolResult = (req: RecordedRequest): string =>
  messagesOf(req)
    .filter((m) => m.role === 'tool')
    .at(-1)?.content ?? '';
const call = (args: Record<string, unknown>) => ({ toolCalls: [{ name: 'schedule', arguments: JSON.stringify(args) }] });
/** A turn that calls the schedule tool with `args`, then says what the tool answered. */
const scheduling =
  (args: Record<string, unknown>): Script =>
  (step, req) =>
    step === 0 ? call(args) : { text: `tool: ${toolResult(req)}` };
const requestsFor = (llm: FakeLLM, tag: string): RecordedRequest[] => llm.requests.filter((r) => turnText(r).startsWith(`${tag} `));

function respond(req: RecordedRequest): Step | Promise<Step> {
  const text = turnText(req);
  const script = scripts.get(text.split(/\s+/)[0]);
  return script ? script(stepOf(req), req) : { text: `ok: ${text}` };
}

async function say(tg: TelegramFake, chatId: number, text: string, userId = chatId): Promise<string> {
  const before = repliesIn(tg, chatId).length;
  tg.injectMessage({ chatId, userId, text });
  return (await waitFor(() => repliesIn(tg, chatId)[before], { timeoutMs: 30_000, what: `a reply to "${text}"` })) as string;
}
const replyTo = (tg: TelegramFake, chatId: number, text: string): Promise<string> =>
  waitFor(() => repliesIn(tg, chatId).find((r) => r === text), { timeoutMs: 30_000, what: `"${text}" in chat ${chatId}` });
const taskId = (toolText: string): string => /Scheduled task ([a-z2-9]{8})/.exec(toolText)?.[1] ?? '';

async function admin<T>(gw: GatewayProcess, path: string, method = 'GET'): Promise<{ status: number; body: T }> {
  const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { status: res.status, body: (await res.json()) as T };
}
interface ScheduleJson {
  id: string;
  status: string;
  kind: string;
  cron: string | null;
  next_run_at: string | null;
  owner_id: string;
  session_mode: string;
  run_count: number;
}

describe('scheduled tasks on one process', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  const prefix = uniquePrefix('sched');

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    llm.respondWith(respond);
    gw = await startGateway({
      env: telegramEnv(tg, llm, { HERALD_ADMIN_TOKEN: ADMIN_TOKEN, HERALD_TIMEZONE: 'Europe/Berlin', HERALD_REDIS_PREFIX: prefix, HERALD_TOOLSETS: 'full' }),
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await deleteRedisPrefix(prefix);
    await llm?.close();
    await tg?.close();
  });

  it('"remind me": the tool sets a one-off; when due, its turn runs in a session of its own and is delivered to the chat', async () => {
    const chat = 7101;
    scripts.set('remind', scheduling({ prompt: 'rem1 Tell the user to stretch.', in_minutes: SOON }));
    scripts.set('rem1', () => ({ text: '🧘 Time to stretch!' }));
    const answer = await say(tg, chat, 'remind me to stretch');
    expect(answer).toMatch(/^tool: Scheduled task [a-z2-9]{8}, once\. First run: .* \(Europe\/Berlin\)\. The answer will be posted in this chat/);
    await replyTo(tg, chat, '🧘 Time to stretch!');
    // Not a reply to any message of the user's: it is the bot speaking first.
    expect(sentIn(tg, chat).find((s) => s.text === '🧘 Time to stretch!')?.reply_to_message_id).toBeUndefined();
    // Its own session: the model saw the task, not the conversation it was set in.
    const [due] = requestsFor(llm, 'rem1');
    expect(lastUserText(due)).toMatch(new RegExp(`^\\[Scheduled task ${taskId(answer)}, set by User${chat} \\(once, at .*\\)\\. It is due now`));
    expect(JSON.stringify(messagesOf(due))).not.toContain('remind me to stretch');
    // Its tools are the user's, but for clarify: nobody asked for this turn, so nobody is there to answer.
    const toolNames = (req: RecordedRequest): string[] => ((req.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(toolNames(requestsFor(llm, 'remind')[0])).toEqual(expect.arrayContaining(['schedule', 'clarify', 'memory']));
    expect(toolNames(due)).toContain('schedule');
    expect(toolNames(due)).not.toContain('clarify');
    expect(await say(tg, chat, '/schedules')).toBe('You have no scheduled tasks.');
  });

  it('a task set with session "origin" runs in the conversation, with its history', async () => {
    const chat = 7102;
    await say(tg, chat, 'hist1 my favourite fruit is the quince');
    scripts.set('orig', scheduling({ prompt: 'rem2 Ask about the fruit.', in_minutes: SOON, session: 'origin' }));
    scripts.set('rem2', () => ({ text: 'How is the quince?' }));
    await say(tg, chat, 'orig ask me later');
    await replyTo(tg, chat, 'How is the quince?');
    expect(JSON.stringify(messagesOf(requestsFor(llm, 'rem2')[0]))).toContain('my favourite fruit is the quince');
  });

  it("a task due while the user's own turn runs waits behind it (queued, not dropped), then is delivered", async () => {
    const chat = 7103;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // The user's turn sets a task due in a moment, then keeps working until the test lets it finish.
    scripts.set('slow', async (step, req) => {
      if (step === 0) return call({ prompt: 'rem3 Say that the reminder came.', in_minutes: SOON });
      await held;
      return { text: `slow done (${toolResult(req).slice(0, 30)})` };
    });
    scripts.set('rem3', () => ({ text: 'the reminder came' }));
    tg.injectMessage({ chatId: chat, userId: chat, text: 'slow work and a reminder' });
    // The task came due and its run waits in the chat's mailbox, behind the running turn.
    await gw.waitForLog((l) => l.msg === 'scheduled task due: its turn is queued' && String(l.sessionKey).endsWith(`:dm:${chat}`), 'the due run');
    expect(requestsFor(llm, 'rem3')).toEqual([]);
    release();
    await replyTo(tg, chat, 'the reminder came');
    const replies = repliesIn(tg, chat);
    expect(replies).toHaveLength(2);
    expect(replies[0]).toMatch(/^slow done \(Scheduled task/);
    expect(replies[1]).toBe('the reminder came');
  });

  it("/schedules lists the owner's tasks; only the owner cancels by chat, the admin API sees and cancels any", async () => {
    const [owner, other] = [7104, 7105];
    scripts.set('weekly', scheduling({ prompt: 'rem4 Summarise the week.', cron: '0 9 * * 1' }));
    const id = taskId(await say(tg, owner, 'weekly summary please'));
    const list = await say(tg, owner, '/schedules');
    expect(list).toMatch(
      new RegExp(
        `^Your scheduled tasks \\(1\\):\\n• ${id} — repeats: cron "0 9 \\* \\* 1" in Europe/Berlin; next Mon .* 09:00 \\(Europe/Berlin\\) — "rem4 Summarise the week\\."\\nCancel one with /schedules cancel <id>\\.$`,
      ),
    );

    const listed = await admin<{ schedules: ScheduleJson[] }>(gw, `/admin/schedules?platform=telegram&user=${owner}`);
    expect(listed.body.schedules).toEqual([
      expect.objectContaining({ id, status: 'active', kind: 'cron', cron: '0 9 * * 1', owner_id: String(owner), session_mode: 'own' }),
    ]);
    expect(new Date(listed.body.schedules[0].next_run_at ?? '').getUTCDay()).toBe(1);

    expect(await say(tg, other, `/schedules cancel ${id}`)).toBe(`You have no scheduled task "${id}". Send /schedules to see yours.`);
    expect(await say(tg, owner, `/schedules cancel ${id}`)).toBe(`🗑 Cancelled scheduled task ${id}.`);
    expect((await admin<ScheduleJson>(gw, `/admin/schedules/${id}`)).body.status).toBe('cancelled');
    const queue = new Queue(SCHEDULE_QUEUE, { connection: { url: 'redis://127.0.0.1:6379' }, prefix });
    try {
      expect(await queue.getJobScheduler(id)).toBeUndefined();
      const second = taskId(await say(tg, owner, 'weekly summary again'));
      expect(await queue.getJobScheduler(second)).toBeDefined();
      expect((await admin(gw, `/admin/schedules/${second}/cancel`, 'POST')).status).toBe(200);
      expect((await admin(gw, `/admin/schedules/${second}/cancel`, 'POST')).status).toBe(409);
      expect((await admin(gw, '/admin/schedules/nosuchid/cancel', 'POST')).status).toBe(404);
      expect(await queue.getJobScheduler(second)).toBeUndefined();
    } finally {
      await queue.close();
    }
    expect(await say(tg, owner, '/schedules')).toBe('You have no scheduled tasks.');
  });

  it('bad input gets a clear answer and nothing is scheduled', async () => {
    const chat = 7106;
    scripts.set('bad', scheduling({ prompt: 'x', at: '2001-01-01T09:00' }));
    expect(await say(tg, chat, 'bad remind me in the past')).toMatch(/^tool: Error: schedule failed: 2001-01-01T09:00 \(Europe\/Berlin\) is in the past/);
    expect(await say(tg, chat, '/schedules')).toBe('You have no scheduled tasks.');
  });
});

describe('scheduled tasks across restarts and workers', () => {
  it('a task that came due while Herald was down runs when it is back, also when Redis lost its scheduler', async () => {
    const tg = await startTelegramFake();
    const llm = await startFakeOpenAI();
    llm.respondWith(respond);
    scripts.set('rem5', () => ({ text: 'kept across the restart' }));
    scripts.set('rem6', () => ({ text: 'restored from the store' }));
    const prefix = uniquePrefix('sched-restart');
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-sched-'));
    const dbPath = join(dataDir, 'herald.db');
    const env = telegramEnv(tg, llm, { HERALD_REDIS_PREFIX: prefix, HERALD_DB: dbPath });
    let gw = await startGateway({ env });
    await say(tg, 7201, 'hello');
    await gw.stop();
    // While it is down: two tasks set through the same service the tool uses; one scheduler is then lost from Redis.
    const store = await SessionStore.open(dbPath);
    const schedules = openSchedules(loadConfig({ env, file: null }), store, pino({ level: 'silent' }));
    const origin = {
      platform: 'telegram',
      ownerId: '7201',
      conversationId: 'telegram:7201',
      chatType: 'dm',
      chatId: '7201',
      sessionKey: 'agent:main:telegram:dm:7201',
    };
    try {
      await schedules.service.create({ origin, prompt: 'rem5 say it', inMinutes: SOON });
      const lost = await schedules.service.create({ origin, prompt: 'rem6 say it', inMinutes: SOON });
      await schedules.queue.removeJobScheduler(lost.id);
    } finally {
      await schedules.close();
      await store.close();
    }
    gw = await startGateway({ env });
    try {
      await replyTo(tg, 7201, 'kept across the restart');
      await replyTo(tg, 7201, 'restored from the store');
      await gw.waitForLog((l) => l.msg === 'scheduled tasks reconciled with Redis' && l.restored === 1, 'the reconcile');
    } finally {
      await gw.stop();
      await deleteRedisPrefix(prefix);
      rmSync(dataDir, { recursive: true, force: true });
      await llm.close();
      await tg.close();
    }
  });

  it('with two workers up, a due task runs once', async () => {
    const tg = await startTelegramFake();
    const llm = await startFakeOpenAI();
    llm.respondWith(respond);
    let cluster: Cluster | undefined;
    try {
      cluster = await startCluster({ workers: 2, env: telegramEnv(tg, llm) });
      const chat = 7301;
      scripts.set('twice', scheduling({ prompt: 'rem7 Say it once.', in_minutes: SOON }));
      scripts.set('rem7', () => ({ text: 'said once' }));
      await say(tg, chat, 'twice remind me');
      await replyTo(tg, chat, 'said once');
      // A later message in the same chat is a barrier: a second run would have been answered before it.
      await say(tg, chat, 'after the reminder');
      expect(repliesIn(tg, chat).filter((r) => r === 'said once')).toHaveLength(1);
      expect(requestsFor(llm, 'rem7')).toHaveLength(1);
    } finally {
      await cluster?.stop();
      await llm.close();
      await tg.close();
    }
  }, 120_000); // three processes to start on a shared machine
});
