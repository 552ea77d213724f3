/**
 * Spend caps end to end: real gateway processes, real Redis and SQLite, the Telegram and OpenAI stand-ins. Every
 * model call costs $0.30 (HERALD_PRICES), a user may spend $1 a day.
 *  - Across workers: the first worker runs two turns, then stops; a second worker process sees that spend, gives
 *    the 80 % notice once, runs the turn that crosses the cap, and refuses the next with a clear reply.
 *  - Across a restart: the spend is in the store; a restarted gateway still refuses, /usage shows the spend, and
 *    an admin reset through the admin API lets the user go on; /retry runs the refused message (it was kept).
 *  - A stopped turn: the call it made before /stop counts in the conversation's tokens, cost and API calls and in
 *    the person's spend, once (the next turn adds only its own); the memory flush of /new counts too.
 *  - /compress: its summary call and its memory flush count in the person's spend, the summary in the
 *    compressed conversation's cost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, startCluster, uniquePrefix, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { metric } from './helpers/metrics.js';
import { waitFor } from './helpers/ports.js';

const TOKEN = 'budget-admin-token-0123456789';
/** $1,000 per million input tokens: 300 tokens = $0.30 a call. */
const PRICES = JSON.stringify({ 'gpt-4.1-mini': { input: 1000, output: 0 } });
const BUDGETS = JSON.stringify([{ scope: 'user', period: 'day', usd: 1 }]);

let tg: TelegramFake;
let llm: FakeLLM;

async function say(chatId: number, text: string): Promise<string> {
  const before = repliesIn(tg, chatId).length;
  tg.injectMessage({ chatId, userId: chatId, text });
  return waitFor(() => repliesIn(tg, chatId)[before] ?? null, { timeoutMs: 30_000, what: `a reply to "${text}"` });
}

beforeAll(async () => {
  tg = await startTelegramFake();
  llm = await startFakeOpenAI();
  llm.respondWith((req) => {
    const messages = (req.body.messages ?? []) as Array<{ role: string; content: string | null }>;
    const text = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    // A tool call first (a priced call), then an answer that takes long enough to be stopped.
    if (text.startsWith('tool then stuck')) {
      return messages.at(-1)?.role === 'tool'
        ? { text: 'stale', delayMs: 20_000, usage: { input: 300, output: 5 } }
        : { toolCalls: [{ name: 'no_such_tool', arguments: '{}' }], usage: { input: 300, output: 5 } };
    }
    return { text: `ok: ${text}`, usage: { input: 300, output: 5 } };
  });
});

afterAll(async () => {
  await llm?.close();
  await tg?.close();
});

describe('budgets (real gateway)', () => {
  let cluster: Cluster | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it('a budget used up mid-conversation across two worker processes: notice at 80 % once, then a clear refusal', async () => {
    const USER = 7001;
    cluster = await startCluster({ workers: 1, env: telegramEnv(tg, llm, { HERALD_PRICES: PRICES, HERALD_BUDGETS: BUDGETS }) });
    expect(await say(USER, 'one')).toBe('ok: one');
    expect(await say(USER, 'two')).toBe('ok: two');
    expect(await metric(cluster.workers[0], 'herald_llm_cost_usd_total', { profile: 'default', model: 'openai:gpt-4.1-mini' })).toBeCloseTo(0.6, 6);
    await cluster.workers[0].stop();
    const second = await cluster.addWorker();

    // $0.90 after this one: the 80 % notice comes with the answer, once.
    expect(await say(USER, 'three')).toBe('ok: three\n\n⚠️ Your daily budget is 90 % used ($0.90 of $1.00).');
    expect(await say(USER, 'four')).toBe('ok: four');
    const calls = llm.requests.length;
    expect(await say(USER, 'five')).toMatch(/^⛔ Your daily budget is used up \(\$1\.20 of \$1\.00\)\. Nothing more runs until it resets tomorrow/);
    expect(llm.requests.length).toBe(calls); // the model was not asked
    // Another user is not held back by it.
    expect(await say(7002, 'hello')).toBe('ok: hello');
    expect(await metric(second, 'herald_llm_cost_usd_total', { profile: 'default', model: 'openai:gpt-4.1-mini' })).toBeCloseTo(0.9, 6);
    expect(await metric(second, 'herald_llm_cache_hit_ratio', { profile: 'default', model: 'openai:gpt-4.1-mini' })).toBe(0);
    // One bot token, one poller: the next test's gateway must not share the stand-in's updates with this cluster.
    await cluster.stop();
    cluster = undefined;
  });

  it('spend survives a restart; /usage shows it; an admin reset lets the user go on', async () => {
    const USER = 7101;
    const dir = mkdtempSync(join(tmpdir(), 'herald-budgets-'));
    const prefix = uniquePrefix('budgets');
    const env = telegramEnv(tg, llm, {
      HERALD_PRICES: PRICES,
      HERALD_BUDGETS: BUDGETS,
      HERALD_DB: join(dir, 'herald.db'),
      HERALD_REDIS_PREFIX: prefix,
      HERALD_ADMIN_TOKEN: TOKEN,
    });
    let gw: GatewayProcess | undefined;
    try {
      gw = await startGateway({ env });
      for (const text of ['a', 'b', 'c', 'd']) expect(await say(USER, text)).toMatch(new RegExp(`^ok: ${text}`));
      expect(await say(USER, 'e')).toMatch(/^⛔ Your daily budget is used up/);
      await gw.stop();

      gw = await startGateway({ env });
      expect(await say(USER, 'f')).toMatch(/^⛔ Your daily budget is used up \(\$1\.20 of \$1\.00\)/);
      const usage = await say(USER, '/usage');
      expect(usage).toContain('Estimated cost of this conversation: $1.2000');
      expect(usage).toContain('Your spend: today $1.20 · 1,220 tokens; this month $1.20 · 1,220 tokens');
      // The real share, past 100 % when the last turn overshot ($1.20 of $1.00).
      expect(usage).toContain('Your daily budget: $0.00 of $1.00 left (120 % used)');

      const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
      const listed = (await (await fetch(`${gw.url}/admin/budgets?scope=user:telegram:${USER}`, { headers: auth })).json()) as {
        spend: Array<{ scope: string; cost_usd: number }>;
      };
      expect(listed.spend.map((s) => [s.scope, Number(s.cost_usd.toFixed(2))])).toEqual([
        [`user:telegram:${USER}`, 1.2],
        [`user:telegram:${USER}`, 1.2],
      ]);
      const reset = await fetch(`${gw.url}/admin/budgets/reset`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ scope: `user:telegram:${USER}`, period: 'day' }),
      });
      expect(await reset.json()).toEqual({ reset: 1 });
      const bad = await fetch(`${gw.url}/admin/budgets/reset`, { method: 'POST', headers: auth, body: JSON.stringify({ scope: 'everyone' }) });
      expect(bad.status).toBe(400);
      // The refused message was kept: /retry runs it now.
      expect(await say(USER, '/retry')).toBe('ok: f');
      expect(await say(USER, 'g')).toBe('ok: g');
    } finally {
      await gw?.stop();
      await deleteRedisPrefix(prefix);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a stopped turn's spend counts in the conversation's usage and the budgets, once", async () => {
    const USER = 7201;
    // Debug logs: the line that says the stopped turn has ended.
    cluster = await startCluster({ workers: 0, env: telegramEnv(tg, llm, { HERALD_PRICES: PRICES, HERALD_BUDGETS: BUDGETS, HERALD_LOG_LEVEL: 'debug' }) });
    const asked = llm.requests.length;
    tg.injectMessage({ chatId: USER, userId: USER, text: 'tool then stuck' });
    await waitFor(
      () => llm.requests.slice(asked).some((r) => r.endedAt === undefined && (r.body.messages as Array<{ role: string }>).at(-1)?.role === 'tool'),
      {
        what: 'the second call of the turn (after its tool)',
      },
    );
    expect(await say(USER, '/stop')).toBe('⏹ Stopped.');
    await cluster.ingress.waitForLog((l) => l.msg === 'turn ended' && l.abort === 'stop', 'the stopped turn to end');

    // The answered call ($0.30, 305 tokens) is in; the aborted one was made (an API call) but never answered.
    let usage = await say(USER, '/usage');
    expect(usage).toContain('Tokens: in 300 · out 5');
    expect(usage).toContain('API calls: 2');
    expect(usage).toContain('Estimated cost of this conversation: $0.3000');
    expect(usage).toContain('Your spend: today $0.30 · 305 tokens');

    expect(await say(USER, 'and now')).toBe('ok: and now');
    usage = await say(USER, '/usage');
    expect(usage).toContain('Tokens: in 600 · out 10');
    expect(usage).toContain('API calls: 3');
    expect(usage).toContain('Estimated cost of this conversation: $0.6000');
    expect(usage).toContain('Your spend: today $0.60 · 610 tokens');

    // /new saves notes with one more call behind its reply: priced into the person's spend and the metrics too.
    expect(await say(USER, '/new')).toMatch(/^✨ Started a new conversation/);
    const ingress = cluster.ingress;
    await waitFor(async () => ((await metric(ingress, 'herald_llm_cost_usd_total', { profile: 'default', model: 'openai:gpt-4.1-mini' })) ?? 0) > 0.85, {
      what: 'the flush of /new priced',
    });
    expect(await say(USER, '/usage')).toContain('Your spend: today $0.90 · 915 tokens');
    await cluster.stop();
    cluster = undefined;
  });

  it("/compress prices its summary call (and its memory flush) into the conversation and the person's spend", async () => {
    const USER = 7301;
    const roomy = JSON.stringify([{ scope: 'user', period: 'day', usd: 100 }]);
    cluster = await startCluster({ workers: 0, env: telegramEnv(tg, llm, { HERALD_PRICES: PRICES, HERALD_BUDGETS: roomy }) });
    // Four exchanges: /compress keeps the first three messages and the last four, so the middle has a fifth.
    for (const text of ['one', 'two', 'three', 'four']) expect(await say(USER, text)).toBe(`ok: ${text}`);
    expect(await say(USER, '/usage')).toContain('Your spend: today $1.20 · 1,220 tokens');
    const asked = llm.requests.length;
    expect(await say(USER, '/compress')).toMatch(/Compressed the conversation/);
    // Two calls: the memory flush (into the old session) and the summary (into the compressed one), $0.30 each.
    expect(llm.requests.length - asked).toBe(2);
    const usage = await say(USER, '/usage');
    expect(usage).toContain('Your spend: today $1.80 · 1,830 tokens');
    expect(usage).toContain('Estimated cost of this conversation: $0.3000');
    await cluster.stop();
    cluster = undefined;
  });
});
