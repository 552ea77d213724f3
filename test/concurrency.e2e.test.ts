/**
 * Concurrency limits end to end (real gateway, Redis, the Telegram and OpenAI stand-ins): what is over a limit waits
 * its turn and is answered, never refused. The model answers slowly, so without the limit the second request would
 * reach it while the first is still being answered; with it, the second reaches the model only after the first
 * reply went out (a turn limit) or after the first response is over (the model-call limit). (Ordering, not timing,
 * is asserted.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { waitFor } from './helpers/ports.js';

let tg: TelegramFake;
let llm: FakeLLM;
/** For each request text: how many replies the other user had already received when it reached the model. */
const seenAtArrival = new Map<string, number>();
/** For each request text: how many requests the model was serving when it arrived (itself included). */
const servingAtArrival = new Map<string, number>();
const lastUser = (req: RecordedRequest): string =>
  ((req.body.messages ?? []) as Array<{ role: string; content: string | null }>).filter((m) => m.role === 'user').at(-1)?.content ?? '';

beforeAll(async () => {
  tg = await startTelegramFake();
  llm = await startFakeOpenAI();
  llm.respondWith((req) => {
    const text = lastUser(req);
    const [, other] = text.split(' ');
    seenAtArrival.set(text, repliesIn(tg, Number(other)).length);
    servingAtArrival.set(text, llm.activeRequests());
    return { text: `ok: ${text}`, delayMs: 800 };
  });
});

afterAll(async () => {
  await llm?.close();
  await tg?.close();
});

async function both(a: number, b: number): Promise<void> {
  tg.injectMessage({ chatId: a, userId: a, text: `first ${b}` });
  await waitFor(() => seenAtArrival.has(`first ${b}`), { what: 'the first request at the model' });
  tg.injectMessage({ chatId: b, userId: b, text: `second ${a}` });
  await waitFor(() => (repliesIn(tg, a).length >= 1 && repliesIn(tg, b).length >= 1 ? true : null), { timeoutMs: 30_000, what: 'both replies' });
  expect([repliesIn(tg, a), repliesIn(tg, b)]).toEqual([[`ok: first ${b}`], [`ok: second ${a}`]]);
}

describe('concurrency limits (real gateway)', () => {
  let cluster: Cluster | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it("a profile's max_concurrent_turns: the second user's turn waits for the first, then runs", async () => {
    cluster = await startCluster({
      workers: 0,
      env: telegramEnv(tg, llm, { HERALD_PROFILES: JSON.stringify({ narrow: { max_concurrent_turns: 1 } }), HERALD_DEFAULT_PROFILE: 'narrow' }),
    });
    await both(8001, 8002);
    // The second request reached the model only once the first user had their answer.
    expect(seenAtArrival.get('second 8001')).toBe(1);
    await cluster.stop();
    cluster = undefined;
  });

  it('HERALD_LLM_CONCURRENCY across profiles: the second call waits for the first', async () => {
    cluster = await startCluster({
      workers: 1,
      env: telegramEnv(tg, llm, {
        HERALD_LLM_CONCURRENCY: '1',
        HERALD_PROFILES: JSON.stringify({ other: {} }),
        HERALD_ROUTES: JSON.stringify([{ user: '8102', profile: 'other' }]),
      }),
    });
    await both(8101, 8102);
    // The limit holds the model call, not the delivery after it: the second request may overtake the first
    // reply, but it reaches the model only once the first response is over.
    expect(servingAtArrival.get('first 8102')).toBe(1);
    expect(servingAtArrival.get('second 8101')).toBe(1);
  });

  it('HERALD_TURN_PREP_LIMIT=1: a turn gives up its place when its model request goes out, so the next one prepares meanwhile', async () => {
    // The first answer waits for the second request (at most 20 s): with the place held until a turn's end, the
    // second would reach the model only after that wait, with nothing else in flight.
    let secondArrived!: () => void;
    const arrived = new Promise<void>((r) => (secondArrived = r));
    llm.respondWith(async (req) => {
      const text = lastUser(req);
      servingAtArrival.set(text, llm.activeRequests());
      if (text.startsWith('go')) secondArrived();
      else await Promise.race([arrived, new Promise((r) => setTimeout(r, 20_000))]);
      return { text: `ok: ${text}` };
    });
    await cluster?.stop();
    // One worker process: the limit is per process.
    cluster = await startCluster({ workers: 1, env: telegramEnv(tg, llm, { HERALD_TURN_PREP_LIMIT: '1' }) });
    tg.injectMessage({ chatId: 8201, userId: 8201, text: 'held' });
    await waitFor(() => servingAtArrival.has('held'), { what: 'the first request at the model' });
    tg.injectMessage({ chatId: 8202, userId: 8202, text: 'go' });
    await waitFor(() => (repliesIn(tg, 8201).length >= 1 && repliesIn(tg, 8202).length >= 1 ? true : null), { timeoutMs: 30_000, what: 'both replies' });
    expect([repliesIn(tg, 8201), repliesIn(tg, 8202)]).toEqual([['ok: held'], ['ok: go']]);
    expect(servingAtArrival.get('go')).toBe(2);
  });
});
