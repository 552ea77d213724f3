/**
 * The agent's built-in tools end to end: the real gateway process (HERALD_TOOLSETS=full), real Redis and SQLite,
 * the Telegram stand-in for users and the OpenAI stand-in scripted to call the tools.
 *
 * The stand-in answers by the tag at the start of the conversation's latest user text (`mem1 ...` → script
 * `mem1`), and a script sees which step of the turn it is at (0 for the turn's first request, 1 after the first
 * tool results, ...). Subagents are recognised by their system prompt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUDGET_SUMMARY_PROMPT, CHILD_SYSTEM_PROMPT } from '@herald/agent-core';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { metric } from './helpers/metrics.js';
import { waitFor } from './helpers/ports.js';

interface WireMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
}

/** Children's calls plus the parent's, so 6 = 3 parent calls + 3 one-call subagents. */
const MAX_ITERATIONS = 6;

let tg: TelegramFake;
let llm: FakeLLM;
let cluster: Cluster;

type Script = (step: number, req: RecordedRequest) => Step;
const scripts = new Map<string, Script>();

const messagesOf = (req: RecordedRequest): WireMessage[] => (req.body.messages ?? []) as WireMessage[];
const toolNamesOf = (req: RecordedRequest): string[] => ((req.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
const isChild = (req: RecordedRequest): boolean => messagesOf(req)[0]?.content === CHILD_SYSTEM_PROMPT;
/** The user text of the turn, without the saved-notes block in front. */
function turnText(req: RecordedRequest): string {
  const users = messagesOf(req).filter((m) => m.role === 'user');
  return (users.at(-1)?.content ?? '').replace(/\s*<memory>[\s\S]*?<\/memory>$/, '');
}
/** Requests the model already answered in this turn (assistant messages after the last user message). */
function stepOf(req: RecordedRequest): number {
  const messages = messagesOf(req);
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
}
const toolResults = (req: RecordedRequest): string[] =>
  messagesOf(req)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content ?? '');
const requestsFor = (tag: string): RecordedRequest[] => llm.requests.filter((r) => !isChild(r) && turnText(r).startsWith(`${tag} `));
const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });

function respond(req: RecordedRequest): Step {
  if (isChild(req)) return { text: `child finished: ${turnText(req).split('\n')[0]}` };
  const text = turnText(req);
  if (text === BUDGET_SUMMARY_PROMPT) return { text: 'summary after the budget ran out' };
  const script = scripts.get(text.split(/\s+/)[0]);
  return script ? script(stepOf(req), req) : { text: `ok: ${text}` };
}

async function say(chatId: number, text: string, replies = repliesIn(tg, chatId).length + 1): Promise<string[]> {
  tg.injectMessage({ chatId, userId: chatId, text });
  return waitFor(() => (repliesIn(tg, chatId).length >= replies ? repliesIn(tg, chatId) : null), { timeoutMs: 20_000, what: `a reply to "${text}"` });
}

beforeAll(async () => {
  tg = await startTelegramFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  cluster = await startCluster({
    workers: 0,
    env: telegramEnv(tg, llm, { HERALD_TOOLSETS: 'full', HERALD_MAX_ITERATIONS: String(MAX_ITERATIONS), HERALD_DELEGATE_MAX_PER_TURN: '3' }),
  });
});

afterAll(async () => {
  await cluster?.stop();
  await llm?.close();
  await tg?.close();
});

describe('agent tools (real gateway, scripted model)', () => {
  it("memory: what A saves is shown in the first request of A's next session, and never to B", async () => {
    const [A, B] = [5001, 5002];
    scripts.set('mem1', (step) =>
      step === 0 ? { toolCalls: [call('memory', { action: 'add', target: 'user', content: 'Favourite colour: teal' })] } : { text: 'Saved it.' },
    );
    expect((await say(A, 'mem1 remember that my favourite colour is teal')).at(-1)).toBe('Saved it.');
    expect(requestsFor('mem1')[1] && toolResults(requestsFor('mem1')[1])[0]).toMatch(/^Saved \(user\)/);

    await say(A, '/new');
    expect((await say(A, 'mem2 which colour do I like?')).at(-1)).toBe('ok: mem2 which colour do I like?');
    const [first] = requestsFor('mem2');
    const messages = messagesOf(first);
    // In the user message, after the text; the system prompt stays as it was (prompt caching).
    expect(messages.at(-1)?.content).toMatch(/^mem2 which colour do I like\?\n\n<memory>\n[\s\S]*Favourite colour: teal\n<\/memory>$/);
    expect(messages[0].content).not.toContain('teal');
    expect(messages.filter((m) => m.role === 'user')).toHaveLength(1);

    await say(B, 'mem3 hello');
    expect(JSON.stringify(messagesOf(requestsFor('mem3')[0]))).not.toMatch(/teal|<memory>/);
  });

  it("session_search: A finds A's earlier session, never B's", async () => {
    const [A, B] = [6001, 6002];
    await say(A, 'srch1 we planned a zebra safari in Kenya');
    await say(B, 'srch2 my secret zebra password is hunter2');
    await say(A, '/new');
    scripts.set('srch3', (step, req) => (step === 0 ? { toolCalls: [call('session_search', { query: 'zebra' })] } : { text: `found: ${toolResults(req)[0]}` }));
    const reply = (await say(A, 'srch3 what did we say about zebras?')).at(-1) ?? '';
    expect(reply).toMatch(/^found: 2 matches in 1 earlier conversation/);
    expect(reply).toContain('planned a >>>zebra<<< safari');
    expect(reply).not.toMatch(/hunter2|secret/);
  });

  it("session_search with summarize: the summary call is the turn's, counted in its spend", async () => {
    const A = 6003;
    await say(A, 'srch4 we booked a gnu tour in Tanzania');
    await say(A, '/new');
    const tokens = async (): Promise<number> =>
      (await metric(cluster.ingress, 'herald_llm_profile_tokens_total', { profile: 'default', model: 'openai:gpt-4.1-mini', kind: 'input' })) ?? 0;
    const before = await tokens();
    // The summary request is told apart by its text ("Query: gnu ..."); its size stands out in the metrics.
    scripts.set('Query:', () => ({ text: 'You booked a gnu tour in Tanzania.', usage: { input: 777_000, output: 9 } }));
    scripts.set('srch5', (step, req) =>
      step === 0 ? { toolCalls: [call('session_search', { query: 'gnu', summarize: true })] } : { text: `summary: ${toolResults(req)[0]}` },
    );
    const reply = (await say(A, 'srch5 what about the gnu?')).at(-1) ?? '';
    expect(reply).toMatch(/^summary: You booked a gnu tour in Tanzania\./);
    expect((await tokens()) - before).toBeGreaterThanOrEqual(777_000);
    // And in the conversation's own tokens, with the turn's calls.
    const usage = (await say(A, '/usage')).at(-1) ?? '';
    expect(Number(/Tokens: in ([\d,]+)/.exec(usage)?.[1]?.replace(/,/g, ''))).toBeGreaterThanOrEqual(777_000);
  });

  it("delegate_task: children spend the parent's budget, and a 4th child in one turn is refused", async () => {
    const chat = 7001;
    scripts.set('deleg', (step) =>
      step === 0
        ? { toolCalls: ['alpha', 'beta', 'gamma', 'delta'].map((t) => call('delegate_task', { task: `research ${t}` })) }
        : { toolCalls: [call('current_time', { timezone: 'UTC' })] },
    );
    expect((await say(chat, 'deleg look into four things')).at(-1)).toBe('summary after the budget ran out');

    const children = llm.requests.filter(isChild);
    expect(children.map(turnText).sort()).toEqual(['research alpha', 'research beta', 'research gamma']);
    // A child gets read-only tools only: no delegation, no questions to the user, no writes.
    expect(toolNamesOf(children[0]).sort()).toEqual(['current_time', 'session_search', 'web_fetch']);
    const parent = requestsFor('deleg');
    const results = toolResults(parent[1]);
    expect(results.slice(0, 3).sort()).toEqual(['child finished: research alpha', 'child finished: research beta', 'child finished: research gamma']);
    expect(results[3]).toMatch(/at most 3 subagents per request, and this would be number 4/);
    // Budget 6 = 3 children + 3 parent calls; then one call without tools asks for a summary.
    const withTools = parent.filter((r) => toolNamesOf(r).length > 0);
    expect(withTools).toHaveLength(MAX_ITERATIONS - 3);
    expect(llm.requests.filter((r) => turnText(r) === BUDGET_SUMMARY_PROMPT)).toHaveLength(1);
  });

  it('clarify: the question reaches the chat, the next message answers it, and the turn finishes', async () => {
    const chat = 8001;
    scripts.set('clar', (step, req) =>
      step === 0
        ? { toolCalls: [call('clarify', { question: 'For how many people?', choices: ['2', '4'] })] }
        : { text: `Booked. (${toolResults(req).at(-1)})` },
    );
    tg.injectMessage({ chatId: chat, userId: chat, text: 'clar book a table for tonight' });
    await waitFor(() => repliesIn(tg, chat).some((t) => t.startsWith('For how many people?')), { timeoutMs: 20_000, what: 'the question' });
    expect(repliesIn(tg, chat)).toEqual(['For how many people?\n\n1. 2\n2. 4']);

    // The default busy mode is interrupt: without the broker, this message would cancel the turn.
    const replies = await say(chat, 'four of us, please', 2);
    expect(replies).toEqual(['For how many people?\n\n1. 2\n2. 4', 'Booked. (The user answered: four of us, please)']);
    // The answer was taken by the turn, not run as a turn of its own; the next message is an ordinary turn.
    expect(llm.requests.some((r) => turnText(r).startsWith('four of us'))).toBe(false);
    expect((await say(chat, 'thanks!')).at(-1)).toBe('ok: thanks!');
    expect(repliesIn(tg, chat)).toHaveLength(3);
  });

  it('web_fetch refuses loopback addresses by default', async () => {
    const chat = 9001;
    scripts.set('fetch', (step, req) =>
      step === 0 ? { toolCalls: [call('web_fetch', { url: `${llm.url}/models` })] } : { text: `fetch said: ${toolResults(req)[0]}` },
    );
    const reply = (await say(chat, 'fetch the model list')).at(-1) ?? '';
    expect(reply).toMatch(/^fetch said: Error: web_fetch failed: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a private, loopback or link-local address/);
    expect(llm.requests.filter((r) => r.path.endsWith('/models'))).toHaveLength(0);
  });
});
