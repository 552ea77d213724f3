/**
 * The agent's knowledge end to end (issue 49, items 1–4): an ingress and two worker processes on one SQLite store
 * and one Redis prefix, the Telegram stand-in for users and the OpenAI stand-in, which records every request and is
 * scripted per message tag (`kn1 …` → script `kn1`; a script sees its step in the turn).
 *
 * Shown: the system prompt's layers in their order and byte-identical across a session's turns, a context file's
 * text reaching the model (a change reaching the next session only), /personality switching, a skill's index in
 * the prompt and its body through skill_view, and a skill the agent wrote with skill_manage used by a later session
 * on the other worker (the one that wrote it is stopped first).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

const ADMIN_TOKEN = 'knowledge-admin-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'herald-knowledge-e2e-'));
const contextDir = join(dir, 'context');
const skillsDir = join(dir, 'skills');
let tg: TelegramFake;
let llm: FakeLLM;
let cluster: Cluster;

type Script = (step: number, req: RecordedRequest) => Step;
const scripts = new Map<string, Script>();
const messagesOf = (req: RecordedRequest): WireMessage[] => (req.body.messages ?? []) as WireMessage[];
const systemOf = (req: RecordedRequest): string => messagesOf(req)[0]?.content ?? '';
function turnText(req: RecordedRequest): string {
  const users = messagesOf(req).filter((m) => m.role === 'user');
  return (users.at(-1)?.content ?? '').replace(/\s*<memory>[\s\S]*?<\/memory>$/, '');
}
function stepOf(req: RecordedRequest): number {
  const messages = messagesOf(req);
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
}
const toolResults = (req: RecordedRequest): string[] =>
  messagesOf(req)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content ?? '');
/** The turns' requests (not side tasks such as titles) whose latest user text starts with the tag. */
const requestsFor = (tag: string): RecordedRequest[] =>
  llm.requests.filter((r) => systemOf(r).includes('# This conversation') && turnText(r).startsWith(`${tag} `));
const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });

function respond(req: RecordedRequest): Step {
  const text = turnText(req);
  const script = scripts.get(text.split(/\s+/)[0]);
  return script ? script(stepOf(req), req) : { text: `ok: ${text}` };
}

async function say(chatId: number, text: string, replies = repliesIn(tg, chatId).length + 1): Promise<string> {
  tg.injectMessage({ chatId, userId: chatId, text });
  const all = await waitFor(() => (repliesIn(tg, chatId).length >= replies ? repliesIn(tg, chatId) : null), {
    timeoutMs: 30_000,
    what: `a reply to "${text}"`,
  });
  return all.at(-1) ?? '';
}

function skill(name: string, description: string, body: string): void {
  mkdirSync(join(skillsDir, name), { recursive: true });
  writeFileSync(join(skillsDir, name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`);
}

beforeAll(async () => {
  mkdirSync(contextDir, { recursive: true });
  writeFileSync(join(contextDir, 'AGENTS.md'), 'Project rule: the release train leaves on Thursdays.');
  skill('deploy-checklist', 'Steps to deploy the app safely.', '1. Run the tests.\n2. Tag the release.\n3. Watch the error rate.');
  tg = await startTelegramFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  cluster = await startCluster({
    workers: 2,
    env: telegramEnv(tg, llm, {
      HERALD_PERSONALITIES: JSON.stringify({ butler: 'You are a discreet butler named Jeeves.' }),
      HERALD_PERSONALITY: 'butler',
      HERALD_CONTEXT_FILES: contextDir,
      HERALD_SKILLS_DIR: skillsDir,
      HERALD_SKILL_MANAGE: 'true',
      HERALD_AUTO_TITLE: 'false',
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
    }),
  });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  await llm?.close();
  await tg?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the agent’s knowledge (ingress + two workers, scripted model)', () => {
  it('builds the system prompt from its layers in order, the same bytes on every turn of a session; file changes reach the next session', async () => {
    const chat = 9101;
    await say(chat, 'kn1 hello');
    await say(chat, 'kn2 and again');
    const [first] = requestsFor('kn1');
    const [second] = requestsFor('kn2');
    const prompt = systemOf(first);
    const marks = [
      'You are a discreet butler named Jeeves.',
      'You are Herald',
      '# Context files\n## AGENTS.md\nProject rule: the release train leaves on Thursdays.',
      '# Skills\nLoad a skill with skill_view before a task it fits:\n- deploy-checklist: Steps to deploy the app safely.',
      '# Formatting\nYou are answering in Telegram.',
      '# Tools\n',
      '- skill_view:',
      '- skill_manage:',
      '\n\n# This conversation\nPlatform: telegram (dm).',
    ];
    const at = marks.map((m) => prompt.indexOf(m));
    expect(
      at.every((i) => i >= 0),
      `${prompt}`,
    ).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(systemOf(second)).toBe(prompt);

    // A context file changed mid-session: this session keeps its prompt byte for byte; a new one reads the change.
    writeFileSync(join(contextDir, 'AGENTS.md'), 'Project rule: the release train leaves on Mondays.');
    await say(chat, 'kn3 still there?');
    expect(systemOf(requestsFor('kn3')[0])).toBe(prompt);
    await say(chat, '/new');
    await say(chat, 'kn4 fresh start');
    expect(systemOf(requestsFor('kn4')[0])).toContain('Project rule: the release train leaves on Mondays.');
  });

  it('/personality switches the conversation to a new segment with the new identity; the transcript goes along', async () => {
    const chat = 9102;
    await say(chat, 'kn5 remember the word marmalade');
    expect(await say(chat, '/personality')).toMatch(/^Personality of this conversation: butler \(profile default: butler\)/);
    expect(await say(chat, '/personality pirate')).toMatch(/^🎭 Personality: pirate\./);
    await say(chat, 'kn6 what was the word?');
    const [req] = requestsFor('kn6');
    expect(systemOf(req)).toMatch(/^You are a cheerful pirate captain/);
    expect(systemOf(req)).not.toContain('Jeeves');
    expect(messagesOf(req).some((m) => m.content?.includes('kn5 remember the word marmalade'))).toBe(true);
    expect(await say(chat, '/prompt')).toMatch(/^System prompt of this conversation \(personality pirate\):\n• identity/);
  });

  it('skill_view loads a skill’s body named in the index', async () => {
    scripts.set('kn7', (step, req) =>
      step === 0 ? { toolCalls: [call('skill_view', { name: 'deploy-checklist' })] } : { text: `following: ${toolResults(req)[0].split('\n')[0]}` },
    );
    expect(await say(9103, 'kn7 deploy the app please')).toBe('following: 1. Run the tests.');
    expect(await say(9103, '/skills')).toContain('• deploy-checklist — Steps to deploy the app safely. [shared]');
  });

  it('a skill the agent wrote (skill_manage) is in the index and readable in a later session on the other worker', async () => {
    const content = '---\nname: tea-brewing\ndescription: How this user likes their tea.\n---\nSteep 4 minutes, milk after.\n';
    scripts.set('kn8', (step, req) =>
      step === 0 ? { toolCalls: [call('skill_manage', { action: 'write', name: 'tea-brewing', content })] } : { text: `saved: ${toolResults(req)[0]}` },
    );
    expect(await say(9104, 'kn8 learn how I brew tea')).toMatch(/^saved: Created the skill "tea-brewing"/);
    // The worker that wrote it leaves; the next session can only run on the other one.
    const writer = cluster.workers.find((w) => w.logs().some((l) => l.msg === 'skill written' && l.skill === 'tea-brewing'));
    expect(writer).toBeDefined();
    const other = cluster.workers.find((w) => w !== writer);
    await writer?.stop();

    scripts.set('kn9', (step, req) => (step === 0 ? { toolCalls: [call('skill_view', { name: 'tea-brewing' })] } : { text: `tea: ${toolResults(req)[0]}` }));
    expect(await say(9105, 'kn9 make me a tea')).toBe('tea: Steep 4 minutes, milk after.');
    expect(systemOf(requestsFor('kn9')[0])).toContain('- tea-brewing: How this user likes their tea.');
    // Answered by the worker that is left.
    expect(other?.proc.exitCode).toBeNull();
  });

  it('the admin API shows a session’s prompt layers and a profile’s skills (with their sources)', async () => {
    const get = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${cluster.ingress.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status, path).toBe(200);
      return (await res.json()) as T;
    };
    const { sessions } = await get<{ sessions: Array<{ id: string; ended_at: number | null }> }>('/admin/sessions?user=9101&active=true');
    const prompt = await get<{ personality: string; layers: Array<{ name: string }>; system_prompt: string }>(`/admin/sessions/${sessions[0].id}/prompt`);
    expect(prompt.personality).toBe('butler');
    expect(prompt.layers.map((l) => l.name)).toEqual(['identity', 'profile', 'context', 'skills', 'platform', 'tools']);
    expect(prompt.system_prompt).toContain('the release train leaves on Mondays');
    const { skills } = await get<{ skills: Array<{ name: string; source: string }> }>('/admin/profiles/default/skills');
    expect(skills.map((s) => `${s.name}:${s.source}`)).toEqual(['deploy-checklist:shared', 'tea-brewing:agent']);
    expect((await get<{ body: string }>('/admin/profiles/default/skills/tea-brewing')).body).toBe('Steep 4 minutes, milk after.');
  });
});
