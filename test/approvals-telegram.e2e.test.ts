/**
 * Issue 50, approvals on Telegram end to end: an ingress and two workers (real processes), the Telegram stand-in for
 * the users, the OpenAI stand-in scripted to call the test MCP server's tool that declares `destructiveHint: true`.
 * The call waits for a press of the inline keyboard (or /approve, /deny typed), runs on approve, is refused on deny;
 * in a group only an admin decides; over the OpenAI-compatible API it is refused; every decision is audited (admin
 * API); and a pending approval survives the SIGKILL of the worker that asked.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { stdioServer } from './fakes/mcp/index.js';
import { startTelegramFake, type SentRecord, type TelegramFake } from './fakes/telegram/index.js';
import { ARG_SECRET, DESTRUCTIVE_TOOL, approvalScript, auditedDecisions } from './helpers/approval-script.js';
import { FAST_TAKEOVER_ENV, lockHolder, startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { waitFor } from './helpers/ports.js';

const ADMIN_TOKEN = 'approvals-admin-token-0123456789';
const API_KEY = 'sk-herald-approvals-0123456789';
const ADMIN_USER = 501;
const FOREIGN = '🙅 These buttons are for the person who asked; yours would not count.';

describe('approvals on telegram (issue 50)', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let cluster: Cluster;

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    llm.respondWith(async (req) => approvalScript(req));
    cluster = await startCluster({
      workers: 1,
      env: telegramEnv(tg, llm, {
        ...FAST_TAKEOVER_ENV,
        HERALD_MCP_SERVERS: JSON.stringify({ local: stdioServer('local') }),
        HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
        HERALD_API_KEYS: API_KEY,
        HERALD_ADMIN_USERS: `telegram:${ADMIN_USER}`,
        HERALD_APPROVAL_TIMEOUT_S: '600',
        TELEGRAM_REQUIRE_MENTION: 'false',
      }),
    });
    await cluster.workers[0].waitForLog((l) => String(l.msg).startsWith('mcp server local ready'), 'the MCP server on the worker');
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
    await tg?.close();
    await llm?.close();
  });

  function keyboardOf(s: SentRecord): Array<{ text: string; callback_data: string }> {
    const markup = s.params.reply_markup as { inline_keyboard?: Array<Array<{ text: string; callback_data: string }>> } | undefined;
    return markup?.inline_keyboard?.flat() ?? [];
  }

  /** The approval questions sent to a chat (messages with an inline keyboard), in order. */
  function questionsIn(chatId: number): Array<{ text: string; messageId: number; data: Record<string, string> }> {
    return tg.sent
      .filter((s) => s.method === 'sendMessage' && s.chat_id === String(chatId) && keyboardOf(s).length > 0)
      .map((s) => ({ text: s.text ?? '', messageId: s.message_id ?? 0, data: Object.fromEntries(keyboardOf(s).map((b) => [b.text, b.callback_data])) }));
  }

  async function question(chatId: number, count = 1): Promise<{ text: string; messageId: number; data: Record<string, string> }> {
    const qs = await waitFor(() => (questionsIn(chatId).length >= count ? questionsIn(chatId) : null), { timeoutMs: 90_000, what: 'the approval question' });
    return qs[count - 1];
  }

  function press(chatId: number, userId: number, q: { messageId: number; data: Record<string, string> }, label: string): string {
    const data = q.data[label];
    if (data === undefined) throw new Error(`no button "${label}" in ${JSON.stringify(Object.keys(q.data))}`);
    return tg.pressButton({ chatId, userId, messageId: q.messageId, data });
  }

  async function replyStartingWith(chatId: number, start: string): Promise<string> {
    return waitFor(() => repliesIn(tg, chatId).find((r) => r.startsWith(start)), { timeoutMs: 90_000, what: `a reply starting "${start}"` });
  }

  const toolRuns = (n: number): number => llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(`local deleted ticket ${n}`)).length;

  it('a destructive MCP tool waits for the button: shown masked, runs on approve, audited', async () => {
    const chat = 7001;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'delete 7' });
    const q = await question(chat);
    expect(Object.keys(q.data)).toEqual(['✅ Approve once', '♾️ Always in this chat session', '⛔ Deny']);
    expect(q.text).toContain(DESTRUCTIVE_TOOL);
    expect(q.text).toContain('"id":7');
    expect(q.text).toContain('destructive');
    expect(q.text).not.toContain(ARG_SECRET);
    // Paused: nothing has run, no answer yet.
    expect(toolRuns(7)).toBe(0);
    expect(repliesIn(tg, chat).some((r) => r.startsWith('results:'))).toBe(false);

    press(chat, chat, q, '✅ Approve once');
    expect(await replyStartingWith(chat, 'results:')).toBe('results: local deleted ticket 7');
    expect(repliesIn(tg, chat)).toContain(`✅ Approved once: ${DESTRUCTIVE_TOOL}.`);

    const audited = (await auditedDecisions(cluster.ingress.url, ADMIN_TOKEN)).find((d) => d.session_key === `agent:main:telegram:dm:${chat}`);
    expect(audited).toMatchObject({
      platform: 'telegram',
      tool: DESTRUCTIVE_TOOL,
      decision: 'approved_once',
      decided_by: `telegram:${chat}`,
      asked_by: String(chat),
    });
    expect(audited?.args).toContain('[redacted]');
    expect(audited?.args).not.toContain(ARG_SECRET);
  });

  it('deny refuses the call with a tool result that says so; /approve always lets later calls run unasked', async () => {
    const chat = 7002;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'delete 8' });
    press(chat, chat, await question(chat), '⛔ Deny');
    expect(await replyStartingWith(chat, 'results:')).toBe(
      `results: Not run: the user denied ${DESTRUCTIVE_TOOL}. Do not try it again unless they ask for it.`,
    );
    expect(toolRuns(8)).toBe(0);

    // The text fallback: /approve always decides the chat's open question and covers the rest of the session.
    tg.injectMessage({ chatId: chat, userId: chat, text: 'delete 9' });
    await question(chat, 2);
    tg.injectMessage({ chatId: chat, userId: chat, text: '/approve always' });
    await waitFor(() => repliesIn(tg, chat).filter((r) => r.startsWith('results:')).length === 2, { timeoutMs: 90_000, what: 'the approved run' });
    expect(repliesIn(tg, chat)).toContain(`✅ Approved for the rest of this session: ${DESTRUCTIVE_TOOL}.`);
    tg.injectMessage({ chatId: chat, userId: chat, text: 'delete 10' });
    await waitFor(() => repliesIn(tg, chat).includes('results: local deleted ticket 10'), { timeoutMs: 90_000, what: 'the unasked run' });
    expect(questionsIn(chat)).toHaveLength(2);

    const decisions = (await auditedDecisions(cluster.ingress.url, ADMIN_TOKEN)).filter((d) => d.session_key === `agent:main:telegram:dm:${chat}`);
    expect(decisions.map((d) => d.decision).sort()).toEqual(['approved_session', 'denied']);
  });

  it('in a group only an admin decides: the asker’s press is refused, the admin’s counts', async () => {
    const group = -7003;
    const alice = 602;
    tg.injectMessage({ chatId: group, userId: alice, text: 'delete 11' });
    const q = await question(group);
    expect(q.text).toContain('Only an admin can decide here.');
    const foreign = press(group, alice, q, '✅ Approve once');
    const note = await tg.waitFor(() => tg.sent.find((s) => s.method === 'answerCallbackQuery' && s.params.callback_query_id === foreign), 20_000);
    expect(note.text).toBe(FOREIGN);
    tg.injectMessage({ chatId: group, userId: alice, text: '/deny' });
    await replyStartingWith(group, '🙅 Only the person who asked');
    expect(toolRuns(11)).toBe(0);

    press(group, ADMIN_USER, q, '✅ Approve once');
    expect(await replyStartingWith(group, 'results:')).toBe('results: local deleted ticket 11');
    const audited = (await auditedDecisions(cluster.ingress.url, ADMIN_TOKEN)).find((d) => d.args.includes('"id":11'));
    expect(audited).toMatchObject({ decision: 'approved_once', decided_by: `telegram:${ADMIN_USER}`, asked_by: String(alice) });
  });

  it('over the OpenAI-compatible API the call is refused with a clear tool result, and audited', async () => {
    const client = new OpenAI({ apiKey: API_KEY, baseURL: `${cluster.ingress.url}/v1`, maxRetries: 0 });
    const done = await client.chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'delete 12' }] });
    expect(done.choices[0].message.content).toBe(
      `results: Error: ${DESTRUCTIVE_TOOL} needs a person's approval (its server marks it as destructive), and requests over the API cannot ask for it; it was not run.`,
    );
    expect(toolRuns(12)).toBe(0);
    const audited = (await auditedDecisions(cluster.ingress.url, ADMIN_TOKEN)).find((d) => d.args.includes('"id":12'));
    expect(audited).toMatchObject({ platform: 'api', decision: 'refused', decided_by: 'policy' });
  });

  it('a pending approval survives a worker SIGKILL: the next worker finds it and the decision, and asks no second time', async () => {
    const chat = 7004;
    const sessionKey = `agent:main:telegram:dm:${chat}`;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'delete 13' });
    const q = await question(chat);
    const asking = await lockHolder(cluster, sessionKey);
    expect(asking).toBe(cluster.workers[0]);
    await cluster.workers[0].stop('SIGKILL');
    // Decided while no worker runs the turn: the decision waits in Redis for the re-run.
    press(chat, chat, q, '✅ Approve once');
    await replyStartingWith(chat, '✅ Approved once');
    const next = await cluster.addWorker();
    expect(await replyStartingWith(chat, 'results:')).toBe('results: local deleted ticket 13');
    // One question in the chat, one decision, one run — by the new worker.
    expect(questionsIn(chat)).toHaveLength(1);
    const decisions = (await auditedDecisions(cluster.ingress.url, ADMIN_TOKEN)).filter((d) => d.session_key === sessionKey);
    expect(decisions.map((d) => d.decision)).toEqual(['approved_once']);
    expect(next.logs().some((l) => l.msg === 'tool call' && l.tool === DESTRUCTIVE_TOOL && l.ran === true)).toBe(true);
  }, 300_000);
});
