/**
 * Issue 17, outbound: the files of a reply survive a crash. A worker is SIGKILLed while the second of two files
 * is uploading (the Telegram stand-in never answers that request); the turn runs again on a new worker, which
 * sends neither the text nor the first file again — they are recorded in the outbox — and uploads the second once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { FAST_TAKEOVER_ENV, startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText, turnStep } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const CHAT = 7301;
let tg: TelegramFake;
let llm: FakeLLM;
let cluster: Cluster;

function respond(req: RecordedRequest): Step {
  const text = lastUserText(req);
  if (!text.startsWith('files')) return { text: `re: ${text}` };
  const send = (name: string) => ({
    toolCalls: [{ name: 'send_file', arguments: JSON.stringify({ content: `the ${name} file`, filename: `${name}.txt`, caption: name }) }],
  });
  return [send('one'), send('two'), { text: 'Two files for you.' }][turnStep(req)] ?? { text: 'done' };
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

const uploads = (name: string) => tg.sent.filter((s) => s.chat_id === String(CHAT) && s.file?.name === name);

describe('files of a reply across a worker crash (real processes)', () => {
  it('a re-run uploads only the file still pending: nothing twice, nothing lost', async () => {
    // The second upload reaches Telegram but is never answered: the worker is killed while it waits.
    tg.failNext('sendDocument', 'silence', 1, (p) => p.caption === 'two');
    tg.injectMessage({ chatId: CHAT, userId: CHAT, text: 'files please' });
    await waitFor(() => tg.callsOf('sendDocument').some((c) => c.params.caption === 'two' && c.status === 0), {
      timeoutMs: 30_000,
      what: 'the second upload to hang',
    });
    expect(repliesIn(tg, CHAT)).toEqual(['Two files for you.']);
    expect(uploads('one.txt')).toHaveLength(1);

    const killed = cluster.workers[0];
    await killed.stop('SIGKILL');
    await cluster.addWorker();
    await waitFor(() => uploads('two.txt').length > 0, { timeoutMs: 60_000, what: 'the second file from the new worker' });

    // A later message in the same chat is answered only after the recovered turn is complete.
    tg.injectMessage({ chatId: CHAT, userId: CHAT, text: 'thanks' });
    await waitFor(() => repliesIn(tg, CHAT).includes('re: thanks'), { timeoutMs: 30_000, what: 'the barrier reply' });
    expect(repliesIn(tg, CHAT)).toEqual(['Two files for you.', 're: thanks']);
    expect(uploads('one.txt')).toHaveLength(1);
    expect(uploads('two.txt')).toHaveLength(1);
    expect(uploads('two.txt')[0].file?.data.toString()).toBe('the two file');
    // The model was not asked again: the recorded reply and its files were delivered without a new LLM call.
    expect(llm.requests.filter((r) => lastUserText(r) === 'files please')).toHaveLength(3);
  });
});
