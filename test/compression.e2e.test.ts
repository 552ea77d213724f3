/**
 * Context compression with real processes and real SDKs:
 *  - the gateway (one `all` process, real Redis, the Telegram and OpenAI stand-ins) compresses a session that
 *    went past 85 % of its window into a child session before the next turn, and that turn's request carries
 *    the summary instead of the middle;
 *  - the agent loop, through the real OpenAI and Anthropic SDKs, answers a 413 by compressing and retrying.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  SUMMARIZER_SYSTEM_PROMPT,
  SUMMARY_PREFIX,
  SessionStore,
  createProvider,
  runConversation,
  type ChatMessage,
  type ProviderName,
} from '@herald/agent-core';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake } from './fakes/telegram/index.js';
import { startCluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText, offersOnlyMemory } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const SUMMARY = 'SUMMARY-7F3: the user is counting turns t0..t3 with padding.';
const isSummaryRequest = (r: RecordedRequest): boolean => r.rawBody.includes(SUMMARIZER_SYSTEM_PROMPT.slice(0, 40));
const sentText = (r: RecordedRequest): string => r.rawBody;

describe('gateway auto-compression (real process)', () => {
  it('a session past 85 % is summarised once into a child session, and the next request carries the summary instead of the middle', async () => {
    const tg = await startTelegramFake();
    cleanups.push(() => tg.close());
    const llm = await startFakeOpenAI();
    cleanups.push(() => llm.close());
    // 8,000-token window: the gateway compresses from 6,800 tokens; the loop's own trigger (4,000, estimated)
    // stays out of the way because the messages are small.
    const cluster = await startCluster({ workers: 0, env: telegramEnv(tg, llm, { HERALD_CONTEXT_WINDOW: '8000' }) });
    cleanups.push(() => cluster.stop());

    const TURNS_BEFORE = 14;
    let agentRequests = 0;
    llm.respondWith((req): Step => {
      if (isSummaryRequest(req)) return { text: SUMMARY };
      agentRequests++;
      // The 14th answer reports a prompt of 7,000 tokens: 87.5 % of the window.
      const usage = agentRequests === TURNS_BEFORE ? { input: 7_000 } : undefined;
      return { text: `re: ${lastUserText(req)}`, ...(usage ? { usage } : {}) };
    });

    const chat = 501;
    const say = async (i: number): Promise<void> => {
      tg.injectMessage({ chatId: chat, userId: chat, text: `t${i} ${'p'.repeat(300)}` });
      await waitFor(() => repliesIn(tg, chat).filter((t) => t.startsWith('re:')).length >= i + 1, { timeoutMs: 15_000, what: `reply ${i}` });
    };
    for (let i = 0; i < TURNS_BEFORE; i++) await say(i);
    expect(llm.requests.filter(isSummaryRequest)).toHaveLength(0);

    await say(TURNS_BEFORE);
    const summaryRequests = llm.requests.filter(isSummaryRequest);
    expect(summaryRequests).toHaveLength(1);
    // Just before it, the model got its one chance to save notes: a call offering only the memory tool.
    const flushIndex = llm.requests.findIndex(offersOnlyMemory);
    expect(flushIndex).toBeGreaterThan(-1);
    expect(flushIndex).toBeLessThan(llm.requests.indexOf(summaryRequests[0]));
    // The summariser saw the middle (t2, t3), not the head.
    expect(sentText(summaryRequests[0])).toContain('t2 ppp');
    expect(sentText(summaryRequests[0])).toContain('t3 ppp');

    const turn = llm.requests.filter((r) => !isSummaryRequest(r)).at(-1) as RecordedRequest;
    const body = sentText(turn);
    expect(body).toContain(SUMMARY);
    expect(body).toContain(SUMMARY_PREFIX.slice(0, 30));
    expect(body).toContain('t0 ppp'); // the head
    expect(body).toContain('t1 ppp');
    expect(body).not.toContain('t2 ppp'); // the middle
    expect(body).not.toContain('t3 ppp');
    expect(body).toContain('t4 ppp'); // the tail
    expect(body).toContain(`t${TURNS_BEFORE} ppp`);
    expect(repliesIn(tg, chat)).toContain('🗜️ Compressed the conversation to keep it going (28 → 24 messages).');

    const store = await SessionStore.open(cluster.dbPath);
    try {
      const sessions = (await store.listSessions({ source: 'telegram' })).sessions;
      expect(sessions).toHaveLength(2);
      const [child, parent] = sessions;
      expect(parent).toMatchObject({ endReason: 'compression', messageCount: 28, parentSessionId: null });
      expect(child).toMatchObject({ parentSessionId: parent.id, source: 'telegram', key: parent.key, endedAt: null });
      expect((await store.currentSession(parent.key))?.id).toBe(child.id);
      expect(await store.getHistory(child.id)).toHaveLength(26); // 24 compressed + this turn
    } finally {
      await store.close();
    }

    // The next turn builds on the child: still the summary, no second compression.
    await say(TURNS_BEFORE + 1);
    expect(llm.requests.filter(isSummaryRequest)).toHaveLength(1);
    expect(sentText(llm.requests.at(-1) as RecordedRequest)).toContain(SUMMARY);
  });
});

describe('the memory flush before an in-loop compression (real process)', () => {
  it('is not made when the compression then finds nothing to summarise (a short conversation past half the window)', async () => {
    const tg = await startTelegramFake();
    cleanups.push(() => tg.close());
    const llm = await startFakeOpenAI();
    cleanups.push(() => llm.close());
    // 8,000-token window: the loop compresses from 4,000 tokens; each tool call reports a 5,000-token prompt, so
    // every tool batch triggers it — but a conversation of a few messages has no middle to summarise.
    const cluster = await startCluster({ workers: 0, env: telegramEnv(tg, llm, { HERALD_CONTEXT_WINDOW: '8000' }) });
    cleanups.push(() => cluster.stop());
    llm.respondWith((req): Step => {
      if (isSummaryRequest(req) || offersOnlyMemory(req)) return { text: 'nothing to save' };
      const body = req.body.messages as Array<{ role: string }>;
      if (body.at(-1)?.role === 'tool') return { text: `re: ${lastUserText(req)}`, usage: { input: 5_100 } };
      return { toolCalls: [{ name: 'current_time', arguments: '{}' }], usage: { input: 5_000 } };
    });

    const chat = 502;
    for (let i = 0; i < 3; i++) {
      tg.injectMessage({ chatId: chat, userId: chat, text: `w${i} hello` });
      await waitFor(() => repliesIn(tg, chat).filter((t) => t.startsWith('re:')).length >= i + 1, { timeoutMs: 20_000, what: `reply ${i}` });
    }
    // Three turns, each with a tool batch over the threshold: no summary, and no memory-only call either.
    expect(llm.requests.filter(isSummaryRequest)).toHaveLength(0);
    expect(llm.requests.filter(offersOnlyMemory)).toHaveLength(0);
  });
});

describe.each<ProviderName>(['openai', 'anthropic'])('a 413 through the real %s SDK', (kind) => {
  it('is answered by compressing the history and retrying successfully', async () => {
    const llm: FakeLLM = kind === 'openai' ? await startFakeOpenAI() : await startFakeAnthropic();
    cleanups.push(() => llm.close());
    const model = kind === 'openai' ? 'gpt-4.1-mini' : 'claude-haiku-4-5';
    const provider = createProvider({ provider: kind, model, apiKey: 'test-key', baseUrl: llm.url });
    llm.script({ error: { status: 413 } });
    llm.respondWith((req) => (isSummaryRequest(req) ? { text: SUMMARY } : { text: 'fits now' }));
    const history: ChatMessage[] = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `h${i} ${'q'.repeat(400)}`,
    }));
    const statuses: string[] = [];
    const result = await runConversation({
      userMessage: 'and now?',
      history,
      systemPrompt: 'You are Herald.',
      provider,
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
      compression: {},
      onEvent: (e) => {
        if (e.type === 'status') statuses.push(`${e.kind}: ${e.message}`);
      },
    });

    expect(result).toMatchObject({ finalResponse: 'fits now', completed: true });
    expect(llm.requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'agent'))).toEqual(['agent', 'summary', 'agent']);
    const retry = sentText(llm.requests[2]);
    expect(retry).toContain(SUMMARY);
    expect(retry).toContain('h0 qqq');
    expect(retry).not.toContain('h10 qqq');
    expect(retry).toContain('h39 qqq');
    expect(statuses.filter((s) => s.startsWith('compression:')).length).toBeGreaterThanOrEqual(2);
    const compacted = result.compactedHistory ?? [];
    expect(compacted.length).toBeLessThan(history.length);
    expect(compacted.slice(-2).map((m) => m.content)).toEqual(['and now?', 'fits now']);
  });
});
