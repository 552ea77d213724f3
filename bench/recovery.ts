/**
 * Recovery after a worker dies (issue 48): an ingress and two workers as real processes, at the default leases,
 * the model call taking 3 s (the OpenAI stand-in's delay). Three times, a message is sent, the worker holding its
 * session (the one running its turn: the lock's value names its pid) is SIGKILLed as soon as the model call is
 * under way, and a fresh worker is started in its place; the figure is the time from the kill to the reply
 * reaching the Telegram stand-in. Then every chat gets one more message, answered after anything still pending for
 * it, and each killed turn must have been answered exactly once. On SQLite, then on PostgreSQL (a database created
 * for the run, dropped after; skipped with a note when the server does not answer).
 *
 *   BENCH_ONLY=recovery npm run bench
 *   node --import tsx bench/recovery.ts          (the gateway processes run from the sources, as the e2e tests')
 *
 * Figures: recovery.<store>.kill_to_reply_s.<round>, recovery.<store>.kill_to_reply_max_s,
 * recovery.<store>.answers_per_killed_turn (1: nothing lost, nothing answered twice).
 */
import { pathToFileURL } from 'node:url';
import { startFakeOpenAI, type FakeLLM } from '../test/fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from '../test/fakes/telegram/index.js';
import { lockHolder, startCluster, type Cluster } from '../test/helpers/cluster.js';
import { repliesIn, telegramEnv } from '../test/helpers/env.js';
import { lastUserText } from '../test/helpers/llm-tags.js';
import { waitFor } from '../test/helpers/ports.js';
import { createBenchDatabase, postgresUnavailable } from './postgres.js';
import { now } from './timing.js';

/** The model call of every turn (the measurement: 3 s). */
const MODEL_CALL_MS = 3_000;
const ROUNDS = 3;
/** Chat ids of the rounds (one conversation per round). */
const FIRST_CHAT = 4_800;

type Store = 'sqlite' | 'postgres';

async function killRound(tg: TelegramFake, llm: FakeLLM, cluster: Cluster, round: number): Promise<number> {
  const chatId = FIRST_CHAT + round;
  const text = `round ${round}`;
  const asked = llm.requests.length;
  tg.injectMessage({ chatId, userId: chatId, text });
  await waitFor(() => llm.requests.slice(asked).some((r) => lastUserText(r) === text), { timeoutMs: 60_000, what: `the model call of ${text}` });
  const running = await waitFor(() => lockHolder(cluster, `agent:main:telegram:dm:${chatId}`), { timeoutMs: 10_000, what: `the worker running ${text}` });
  if (!cluster.workers.includes(running)) throw new Error(`${text} runs in a process that is not a worker`);
  const killedAt = now();
  await running.stop('SIGKILL');
  cluster.workers.splice(cluster.workers.indexOf(running), 1);
  // The restarted one: two workers again for the next round (it may take the turn over itself).
  const restarted = cluster.addWorker();
  await waitFor(() => repliesIn(tg, chatId).includes(`re: ${text}`), { timeoutMs: 120_000, intervalMs: 10, what: `the reply to ${text}` });
  const seconds = (now() - killedAt) / 1000;
  await restarted;
  return seconds;
}

export async function benchRecovery(store: Store): Promise<Record<string, number>> {
  const tg = await startTelegramFake();
  const llm = await startFakeOpenAI();
  llm.respondWith(async (req) => ({ text: `re: ${lastUserText(req)}`, delayMs: MODEL_CALL_MS }));
  const db = store === 'postgres' ? await createBenchDatabase() : null;
  const cluster = await startCluster({ workers: 2, env: telegramEnv(tg, llm, db ? { HERALD_DATABASE_URL: db.url } : {}) });
  const figures: Record<string, number> = {};
  try {
    const took: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) took.push(await killRound(tg, llm, cluster, round));
    // One more message per chat: its answer comes after anything still pending there, so a late duplicate shows.
    for (let round = 1; round <= ROUNDS; round++) tg.injectMessage({ chatId: FIRST_CHAT + round, userId: FIRST_CHAT + round, text: `after ${round}` });
    const chats = took.map((_, i) => FIRST_CHAT + i + 1);
    await waitFor(() => chats.every((c) => repliesIn(tg, c).includes(`re: after ${c - FIRST_CHAT}`)), { timeoutMs: 60_000, what: 'the later answers' });
    const answers = chats.map((c) => repliesIn(tg, c).filter((t) => t === `re: round ${c - FIRST_CHAT}`).length);
    for (const [i, s] of took.entries()) figures[`recovery.${store}.kill_to_reply_s.${i + 1}`] = Number(s.toFixed(2));
    figures[`recovery.${store}.kill_to_reply_max_s`] = Number(Math.max(...took).toFixed(2));
    figures[`recovery.${store}.answers_per_killed_turn`] = answers.every((n) => n === 1) ? 1 : Math.max(...answers.map((n) => (n === 1 ? 0 : n)));
    return figures;
  } finally {
    await cluster.stop();
    await db?.drop();
    await tg.close();
    await llm.close();
  }
}

/** Both stores, figures printed as `name = value`. */
export async function runRecoveryBench(): Promise<void> {
  const why = await postgresUnavailable();
  const stores: Store[] = why === null ? ['sqlite', 'postgres'] : ['sqlite'];
  if (why !== null) console.log(`(PostgreSQL skipped: ${why}; set HERALD_BENCH_DATABASE_URL)`);
  for (const store of stores) {
    console.log(`\n# recovery (${store}): 1 ingress + 2 workers, model call ${MODEL_CALL_MS / 1000} s, the running worker SIGKILLed ${ROUNDS} times`);
    for (const [name, value] of Object.entries(await benchRecovery(store))) console.log(`${name} = ${value}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRecoveryBench().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
