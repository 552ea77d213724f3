/**
 * Agent profiles end to end: the real gateway process, real Redis and SQLite, the Telegram stand-in and the OpenAI
 * stand-in. A route sends one group to the `support` profile (its own prompt and model); everything else gets the
 * default profile. Memory never crosses profiles or people: two users in one group each keep their own notes.
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

let tg: TelegramFake;
let llm: FakeLLM;
let cluster: Cluster;

const messagesOf = (req: RecordedRequest): WireMessage[] => (req.body.messages ?? []) as WireMessage[];
const lastUser = (req: RecordedRequest): string => messagesOf(req).filter((m) => m.role === 'user').at(-1)?.content ?? '';
const turnText = (req: RecordedRequest): string => lastUser(req).replace(/^<memory>[\s\S]*?<\/memory>\s*/, '');
const requestsFor = (tag: string): RecordedRequest[] => llm.requests.filter((r) => turnText(r).startsWith(`${tag} `));
const afterTool = (req: RecordedRequest): boolean => messagesOf(req).at(-1)?.role === 'tool';

function respond(req: RecordedRequest): Step {
  const text = turnText(req);
  const save = /^save(\d) (.+)$/.exec(text);
  if (save && !afterTool(req)) return { toolCalls: [{ name: 'memory', arguments: JSON.stringify({ action: 'add', target: 'user', content: save[2] }) }] };
  return { text: `ok: ${text}` };
}

async function say(chatId: number, userId: number, text: string): Promise<string> {
  const before = repliesIn(tg, chatId).length;
  tg.injectMessage({ chatId, userId, text });
  return waitFor(() => repliesIn(tg, chatId)[before] ?? null, { timeoutMs: 20_000, what: `a reply to "${text}"` });
}

beforeAll(async () => {
  tg = await startTelegramFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  cluster = await startCluster({
    workers: 0,
    env: telegramEnv(tg, llm, {
      TELEGRAM_REQUIRE_MENTION: 'false',
      HERALD_SYSTEM_PROMPT: 'You are the general assistant.',
      HERALD_PROFILES: JSON.stringify({ support: { model: 'openai:gpt-4.1-nano', system_prompt: 'You are the support desk.', toolsets: ['core'] } }),
      HERALD_ROUTES: JSON.stringify([{ platform: 'telegram', chat: String(GROUP), profile: 'support' }]),
    }),
  });
});

afterAll(async () => {
  await cluster?.stop();
  await llm?.close();
  await tg?.close();
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

  it('two users in one group keep separate notes, and a profile\'s notes stay out of the default profile', async () => {
    expect(await say(GROUP, ANA, 'save1 Ana likes teal')).toBe('ok: save1 Ana likes teal');
    expect(await say(GROUP, BEN, 'save2 Ben likes amber')).toBe('ok: save2 Ben likes amber');
    // Each user's next session shows their own notes only.
    await say(GROUP, ANA, '/new');
    await say(GROUP, BEN, '/new');
    await say(GROUP, ANA, 'recall1 what do I like?');
    await say(GROUP, BEN, 'recall2 what do I like?');
    const ana = lastUser(requestsFor('recall1')[0]);
    const ben = lastUser(requestsFor('recall2')[0]);
    expect(ana).toMatch(/^<memory>[\s\S]*Ana likes teal[\s\S]*<\/memory>/);
    expect(ana).not.toContain('amber');
    expect(ben).toMatch(/^<memory>[\s\S]*Ben likes amber[\s\S]*<\/memory>/);
    expect(ben).not.toContain('teal');
    // Ana's private chat is the default profile: the support desk's notes about her are not there.
    await say(ANA, ANA, '/new');
    await say(ANA, ANA, 'recall3 what do I like?');
    expect(JSON.stringify(messagesOf(requestsFor('recall3')[0]))).not.toMatch(/teal|<memory>/);
  });
});
