/**
 * Issue 27, incremental persistence: a worker is SIGKILLed while the model is answering after a tool batch; the
 * turn runs again on a new worker, which continues after the saved tool work: the model is not asked for the
 * tool call again and the tool does not run twice. Also: the text before tool calls reaches the chat (progress).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { FAST_TAKEOVER_ENV, startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText, turnStep } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const CHAT = 7401;
let tg: TelegramFake;
let llm: FakeLLM;
let cluster: Cluster;
let hung = 0;

function respond(req: RecordedRequest): Step {
  const text = lastUserText(req);
  if (text.startsWith('check the clock')) {
    return turnStep(req) === 0 ? { text: 'Let me look at the clock.', toolCalls: [{ name: 'current_time', arguments: '{}' }] } : { text: 'It is noon.' };
  }
  if (!text.startsWith('what time')) return { text: `re: ${text}` };
  if (turnStep(req) === 0) return { toolCalls: [{ name: 'current_time', arguments: '{"timezone":"UTC"}' }] };
  // The first answer after the tool result never comes: the worker is killed while it waits.
  if (hung++ === 0) return { text: 'never', stallAfterEvents: 0 };
  return { text: 'It is noon.' };
}

beforeAll(async () => {
  tg = await startTelegramFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  cluster = await startCluster({
    workers: 1,
    env: telegramEnv(tg, llm, FAST_TAKEOVER_ENV),
  });
});

afterAll(async () => {
  await cluster?.stop();
  await llm?.close();
  await tg?.close();
});

describe('turns with tool work (real processes)', () => {
  it('the re-run continues after the saved tool work instead of starting over', async () => {
    tg.injectMessage({ chatId: CHAT, userId: CHAT, text: 'what time is it?' });
    await waitFor(() => hung > 0, { timeoutMs: 30_000, what: 'the answer after the tool to hang' });
    const killed = cluster.workers[0];
    await killed.stop('SIGKILL');
    await cluster.addWorker();
    await waitFor(() => repliesIn(tg, CHAT).includes('It is noon.'), { timeoutMs: 60_000, what: 'the answer from the new worker' });

    const asks = llm.requests.filter((r) => lastUserText(r) === 'what time is it?');
    // Asked once for the tool call; after the crash the new worker's first request already holds its result.
    expect(asks.filter((r) => turnStep(r) === 0)).toHaveLength(1);
    expect(asks.map(turnStep)).toEqual([0, 1, 1]);
    const resumed = asks[2].body.messages as Array<{ role: string; content: unknown }>;
    expect(resumed.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['what time is it?']);
    expect(resumed.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect(repliesIn(tg, CHAT)).toEqual(['It is noon.']);
  });

  it('text the model writes before its tool calls reaches the chat as a message of its own, before the answer', async () => {
    const chat = CHAT + 1;
    tg.injectMessage({ chatId: chat, userId: chat, text: 'check the clock' });
    await waitFor(() => repliesIn(tg, chat).includes('It is noon.'), { timeoutMs: 30_000, what: 'the answer' });
    expect(repliesIn(tg, chat)).toEqual(['Let me look at the clock.', 'It is noon.']);
  });
});
