/**
 * The failover gap (issue 52): a Redis primary, one replica and three Sentinels (down-after 1 s) as real
 * redis-server processes, an ingress and two workers reaching them through the Sentinels with appends waiting for
 * one replica. Per round, 200 messages over 8 Telegram chats; once 60 are answered the primary is SIGKILLed (and
 * restarted, empty, as a supervisor would: the Sentinels make it the new replica). Each round is a fresh set-up.
 *
 *   BENCH_ONLY=failover npm run bench
 *   node --import tsx bench/failover.ts          (the gateway processes run from the sources, as the e2e tests')
 *
 * Figures per round: failover.promoted_s.<n> (kill → every Sentinel names the replica), failover.next_answer_s.<n>
 * (kill → the first answer after the silence the kill caused: an answer already on its way when the primary died,
 * less than 0.5 s after the previous one, does not end the silence), failover.lost / duplicated / out_of_order
 * (summed over the rounds; all 0 is the promise).
 */
import { pathToFileURL } from 'node:url';
import { startFakeOpenAI } from '../test/fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from '../test/fakes/telegram/index.js';
import { startCluster } from '../test/helpers/cluster.js';
import { repliesIn, telegramEnv } from '../test/helpers/env.js';
import { waitFor } from '../test/helpers/ports.js';
import { startSentinelSet } from '../test/helpers/sentinel-set.js';
import { now } from './timing.js';

const ROUNDS = Number(process.env.BENCH_FAILOVER_ROUNDS ?? 3);
const CHATS = 8;
const PER_CHAT = 25;
/** A shorter pause between answers than this is traffic, not the failover's silence. */
const SILENCE_MS = 500;
const chatId = (c: number): number => 5300 + c;
const text = (c: number, i: number): string => `c${c} m${String(i).padStart(2, '0')}`;

interface Round {
  promotedS: number;
  nextAnswerS: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
}

/** Timestamps of the answers as they reach the stand-in (polled every 5 ms). */
function answerClock(tg: TelegramFake): { times: number[]; stop(): void } {
  const times: number[] = [];
  let seen = 0;
  const timer = setInterval(() => {
    const n = tg.sent.filter((s) => s.method === 'sendMessage' && (s.text ?? '').startsWith('ok: ')).length;
    for (; seen < n; seen++) times.push(now());
  }, 5);
  return { times, stop: () => clearInterval(timer) };
}

function sendMessages(tg: TelegramFake, from: number, to: number): void {
  for (let i = from; i < to; i++) for (let c = 0; c < CHATS; c++) tg.injectMessage({ chatId: chatId(c), userId: chatId(c), text: text(c, i) });
}

function tally(tg: TelegramFake): Pick<Round, 'lost' | 'duplicated' | 'outOfOrder'> {
  let [lost, duplicated, outOfOrder] = [0, 0, 0];
  for (let c = 0; c < CHATS; c++) {
    const got = repliesIn(tg, chatId(c)).filter((t) => t.startsWith('ok: '));
    const expected = Array.from({ length: PER_CHAT }, (_, i) => `ok: ${text(c, i)}`);
    lost += expected.filter((e) => !got.includes(e)).length;
    duplicated += got.length - new Set(got).size;
    const firsts = expected.map((e) => got.indexOf(e)).filter((i) => i >= 0);
    outOfOrder += firsts.filter((v, i) => i > 0 && v < firsts[i - 1]).length;
  }
  return { lost, duplicated, outOfOrder };
}

async function round(): Promise<Round> {
  const set = await startSentinelSet();
  const [tg, llm] = [await startTelegramFake(), await startFakeOpenAI()];
  const env = { ...set.env, HERALD_BUSY_INPUT_MODE: 'queue', HERALD_USER_RATE_LIMIT: '0', HERALD_REDIS_WAIT_REPLICAS: '1' };
  const cluster = await startCluster({ workers: 2, env: telegramEnv(tg, llm, env) }).catch(async (err: unknown) => {
    await Promise.all([llm.close(), tg.close(), set.close()]);
    throw err;
  });
  const clock = answerClock(tg);
  try {
    sendMessages(tg, 0, 10);
    await waitFor(() => clock.times.length >= 60, { timeoutMs: 120_000, what: '60 answers' });
    const killedAt = now();
    const old = await set.killPrimary();
    sendMessages(tg, 10, 15);
    await set.failedOver(old);
    const promotedAt = now();
    await set.restart(old);
    sendMessages(tg, 15, PER_CHAT);
    await waitFor(() => clock.times.length >= CHATS * PER_CHAT, { timeoutMs: 240_000, intervalMs: 100, what: 'all answers' }).catch(() => undefined);
    const after = clock.times.map((t, i) => ({ t, gap: t - (clock.times[i - 1] ?? 0) })).find((a) => a.t > killedAt && a.gap >= SILENCE_MS);
    return { promotedS: (promotedAt - killedAt) / 1000, nextAnswerS: after ? (after.t - killedAt) / 1000 : Number.NaN, ...tally(tg) };
  } finally {
    clock.stop();
    await cluster.stop();
    await Promise.all([llm.close(), tg.close()]);
    await set.close();
  }
}

export async function runFailoverBench(): Promise<void> {
  console.log(`\n# failover: primary + replica + 3 Sentinels (down-after 1 s), 1 ingress + 2 workers, WAIT 1 replica; ${ROUNDS} rounds`);
  const totals = { lost: 0, duplicated: 0, outOfOrder: 0 };
  for (let n = 1; n <= ROUNDS; n++) {
    const r = await round();
    console.log(`failover.promoted_s.${n} = ${r.promotedS.toFixed(2)}`);
    console.log(`failover.next_answer_s.${n} = ${r.nextAnswerS.toFixed(2)}`);
    totals.lost += r.lost;
    totals.duplicated += r.duplicated;
    totals.outOfOrder += r.outOfOrder;
  }
  console.log(`failover.messages = ${ROUNDS * CHATS * PER_CHAT}`);
  console.log(`failover.lost = ${totals.lost}`);
  console.log(`failover.duplicated = ${totals.duplicated}`);
  console.log(`failover.out_of_order = ${totals.outOfOrder}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runFailoverBench().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
