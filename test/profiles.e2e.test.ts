/**
 * Agent profiles end to end: the real gateway process, real Redis and SQLite, the Telegram stand-in and the OpenAI
 * stand-in. A route sends one group to the `support` profile (its own prompt and model); everything else gets the
 * default profile. Memory never crosses profiles or people: two users in one group each keep their own notes.
 * A second Telegram bot (its own stand-in) is routed to the `sales` profile and answers through itself; the HTTP
 * API lists the profiles as models and a request's `model` picks one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { waitFor } from './helpers/ports.js';

interface WireMessage {
  role: string;
  content: string | null;
}

const GROUP = -3000;
const [ANA, BEN] = [3101, 3102];

const API_KEY = 'profiles-api-key-0123456789';
const ADMIN_TOKEN = 'profiles-admin-token-0123456789';

let tg: TelegramFake;
let salesBot: TelegramFake;
let llm: FakeLLM;
let cluster: Cluster;

const messagesOf = (req: RecordedRequest): WireMessage[] => (req.body.messages ?? []) as WireMessage[];
const lastUser = (req: RecordedRequest): string =>
  messagesOf(req)
    .filter((m) => m.role === 'user')
    .at(-1)?.content ?? '';
const turnText = (req: RecordedRequest): string => lastUser(req).replace(/\s*<memory>[\s\S]*?<\/memory>$/, '');
const requestsFor = (tag: string): RecordedRequest[] => llm.requests.filter((r) => turnText(r).startsWith(`${tag} `));
const afterTool = (req: RecordedRequest): boolean => messagesOf(req).at(-1)?.role === 'tool';

function respond(req: RecordedRequest): Step {
  const text = turnText(req);
  const save = /^save(\d) (.+)$/.exec(text);
  if (save && !afterTool(req)) return { toolCalls: [{ name: 'memory', arguments: JSON.stringify({ action: 'add', target: 'user', content: save[2] }) }] };
  return { text: `ok: ${text}` };
}

async function say(chatId: number, userId: number, text: string, bot: TelegramFake = tg): Promise<string> {
  const before = repliesIn(bot, chatId).length;
  bot.injectMessage({ chatId, userId, text });
  return waitFor(() => repliesIn(bot, chatId)[before] ?? null, { timeoutMs: 20_000, what: `a reply to "${text}"` });
}

beforeAll(async () => {
  tg = await startTelegramFake();
  salesBot = await startTelegramFake({ token: '987654321:AAH-sales-token' });
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  cluster = await startCluster({
    workers: 0,
    env: telegramEnv(tg, llm, {
      TELEGRAM_REQUIRE_MENTION: 'false',
      HERALD_SYSTEM_PROMPT: 'You are the general assistant.',
      HERALD_PROFILES: JSON.stringify({
        support: { model: 'openai:gpt-4.1-nano', system_prompt: 'You are the support desk.', toolsets: ['core'] },
        sales: { system_prompt: 'You are the sales team.' },
      }),
      HERALD_ROUTES: JSON.stringify([
        { platform: 'telegram', account: 'sales', profile: 'sales' },
        { platform: 'telegram', chat: String(GROUP), profile: 'support' },
      ]),
      HERALD_BOT_ACCOUNTS: JSON.stringify([{ platform: 'telegram', name: 'sales', bot_token: salesBot.token, api_root: salesBot.url }]),
      HERALD_API_KEYS: API_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
    }),
  });
});

afterAll(async () => {
  await cluster?.stop();
  await llm?.close();
  await tg?.close();
  await salesBot?.close();
});

describe('agent profiles (real gateway)', () => {
  it('routes a group to its profile: its prompt, its model, its name in /status; a DM keeps the default profile', async () => {
    expect(await say(GROUP, ANA, 'route1 hello support')).toBe('ok: route1 hello support');
    const [inGroup] = requestsFor('route1');
    expect(inGroup.body.model).toBe('gpt-4.1-nano');
    expect(messagesOf(inGroup)[0].content).toContain('You are the support desk.');

    expect(await say(ANA, ANA, 'route2 hello in private')).toBe('ok: route2 hello in private');
    const [inDm] = requestsFor('route2');
    expect(inDm.body.model).toBe('gpt-4.1-mini');
    expect(messagesOf(inDm)[0].content).toContain('You are the general assistant.');

    expect(await say(GROUP, ANA, '/status')).toMatch(/Profile support · model openai:gpt-4\.1-nano/);
    expect(await say(ANA, ANA, '/status')).toMatch(/Profile default · model openai:gpt-4\.1-mini/);
  });

  it("two users in one group keep separate notes, and a profile's notes stay out of the default profile", async () => {
    expect(await say(GROUP, ANA, 'save1 Ana likes teal')).toBe('ok: save1 Ana likes teal');
    expect(await say(GROUP, BEN, 'save2 Ben likes amber')).toBe('ok: save2 Ben likes amber');
    // Each user's next session shows their own notes only.
    await say(GROUP, ANA, '/new');
    await say(GROUP, BEN, '/new');
    await say(GROUP, ANA, 'recall1 what do I like?');
    await say(GROUP, BEN, 'recall2 what do I like?');
    const ana = lastUser(requestsFor('recall1')[0]);
    const ben = lastUser(requestsFor('recall2')[0]);
    expect(ana).toMatch(/^recall1 what do I like\?\n\n<memory>[\s\S]*Ana likes teal[\s\S]*<\/memory>$/);
    expect(ana).not.toContain('amber');
    expect(ben).toMatch(/^recall2 what do I like\?\n\n<memory>[\s\S]*Ben likes amber[\s\S]*<\/memory>$/);
    expect(ben).not.toContain('teal');
    // Ana's private chat is the default profile: the support desk's notes about her are not there.
    await say(ANA, ANA, '/new');
    await say(ANA, ANA, 'recall3 what do I like?');
    expect(JSON.stringify(messagesOf(requestsFor('recall3')[0]))).not.toMatch(/teal|<memory>/);
  });

  it('a second bot account answers through itself, as the profile its route names', async () => {
    expect(await say(ANA, ANA, 'bot1 hello sales', salesBot)).toBe('ok: bot1 hello sales');
    expect(messagesOf(requestsFor('bot1')[0])[0].content).toContain('You are the sales team.');
    expect(repliesIn(tg, ANA).some((r) => r.includes('bot1'))).toBe(false); // not through the default bot
    expect(await say(ANA, ANA, '/status', salesBot)).toMatch(/Profile sales/);
    // The same person in the default bot's chat is another conversation, with the default profile.
    expect(await say(ANA, ANA, 'bot2 hello default')).toBe('ok: bot2 hello default');
    expect(messagesOf(requestsFor('bot2')[0])[0].content).toContain('You are the general assistant.');
  });

  it("the HTTP API lists the profiles as models; a request's model picks the profile", async () => {
    const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const models = (await (await fetch(`${cluster.ingress.url}/v1/models`, { headers })).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual(['herald', 'support', 'sales']);
    const ask = async (model: string, text: string): Promise<Response> =>
      fetch(`${cluster.ingress.url}/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }),
      });
    const res = await ask('support', 'api1 hello');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('ok: api1 hello');
    expect(messagesOf(requestsFor('api1')[0])[0].content).toContain('You are the support desk.');
    expect(requestsFor('api1')[0].body.model).toBe('gpt-4.1-nano');
    expect((await ask('herald', 'api2 hello')).status).toBe(200);
    expect(messagesOf(requestsFor('api2')[0])[0].content).toContain('You are the general assistant.');
    expect((await ask('nobody', 'api3 hello')).status).toBe(404);
  });

  it("the admin API lists the profiles with their open sessions, and a profile's sessions with cost and cache hits", async () => {
    const get = async <T>(path: string): Promise<T> =>
      (await (await fetch(`${cluster.ingress.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as T;
    const listed = await get<{ profiles: Array<{ name: string; model: string | null; open_sessions: number }>; default_profile: string; routes: unknown[] }>(
      '/admin/profiles',
    );
    expect(listed.profiles.map((p) => [p.name, p.model])).toEqual([
      ['default', 'openai:gpt-4.1-mini'],
      ['support', 'openai:gpt-4.1-nano'],
      ['sales', 'openai:gpt-4.1-mini'],
    ]);
    expect(listed.profiles.find((p) => p.name === 'support')?.open_sessions).toBeGreaterThanOrEqual(2);
    expect([listed.default_profile, listed.routes.length]).toEqual(['default', 2]);
    const support = await get<{ sessions: Array<{ key: string; profile: string; estimated_cost_usd: number; cache_hit_percent: number | null }> }>(
      '/admin/sessions?profile=support',
    );
    expect(support.sessions.length).toBeGreaterThan(0);
    expect(support.sessions.every((x) => x.profile === 'support' && x.key.startsWith('agent:support:'))).toBe(true);
    // gpt-4.1-nano is in the built-in price table: the stand-in's token counts cost something.
    expect(support.sessions.some((x) => x.estimated_cost_usd > 0)).toBe(true);
    expect(support.sessions.every((x) => x.cache_hit_percent === null || x.cache_hit_percent >= 0)).toBe(true);
  });
});
