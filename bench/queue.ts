/**
 * Herald's per-message path, end to end, against zero-latency stand-ins:
 *   router.handle (event in) → mailbox + BullMQ → worker → agent loop → OpenAI stand-in → store → Telegram egress.
 * The stand-ins run in a child process (bench/stand-ins.ts); this process holds only Herald (role `all`).
 * The store is SQLite (figures `queue.*`) or PostgreSQL (`queue_pg.*`, a database created for the run and dropped
 * after; bench/postgres.ts), each with its default settings.
 *
 *  1. throughput: N messages over S sessions submitted at once → messages/s;
 *  2. added latency, paced at 50 and at 200 messages/s (no backlog): event in → LLM request, and LLM reply →
 *     platform send, p50/p99;
 *  3. raw BullMQ no-op jobs/s on the same Redis, and the ratio of (1) to it;
 *  4. 5,000 concurrent turns whose LLM call takes 2 s, on one worker process: time to finish and peak RSS.
 *
 * Run alone: npm run build && node --conditions=@herald/dist --import tsx bench/queue.ts   (needs Redis on
 *   127.0.0.1:6379; PostgreSQL for the second run, else skipped; bench/gateway.ts says why the compiled gateway)
 *   BENCH_STORE=sqlite|postgres   one backend only (default: both, SQLite first)
 *   BENCH_ONLY=throughput|concurrent|paced   one part only (paced: the paced latency runs, bench/paced.ts)
 *   BENCH_KEEP_DB=1   keep the SQLite file of each run (its folder is printed) to look at afterwards
 */
import { fork, type ChildProcess } from 'node:child_process';
import { figuresFromChild, sendFigures } from './child.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Queue, Worker } from 'bullmq';
import type { InboundMessage } from '@herald/adapters';
import type { Herald } from '../apps/gateway/src/roles/app.js';
import { deleteRedisPrefix } from '../test/helpers/cluster.js';
import { installWorkCounters, perMessage, printDetail, resetDetail, snapshot } from './counters.js';
import { profiled } from './profile.js';
import { BENCH_ADMIN_URL, createBenchDatabase, postgresUnavailable, walBytes } from './postgres.js';
import { serversCpu, serversCpuFigures } from './servers-cpu.js';
import { BENCH_NODE_ARGS, gateway } from './gateway.js';
import { pacedChats, pacedFigures, type PacedRun } from './paced.js';
import { throughputFigures } from './throughput.js';
import { now, percentile, sleep } from './timing.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * BENCH_SCALE=0.2 runs every part with a fifth of the messages (iterating on a shared machine, not for figures);
 * BENCH_SCALE=3 three times as many, up to 5 (steadier CPU profiles of the throughput run).
 */
const SCALE = benchScale(process.env.BENCH_SCALE);
const scaled = (n: number): number => Math.max(10, Math.round(n * SCALE));
export const THROUGHPUT_MESSAGES = scaled(2_000);
/** Ten messages a session, as at scale 1 (more would pass a session's queue limit, MAX_PENDING). */
export const THROUGHPUT_SESSIONS = Math.round(200 * Math.max(1, SCALE));
/** The paced runs' conversations start here (message(): chat 100,000 + session). */
const PACED_FIRST_SESSION = 1_000;
/** How many messages each paced run hands in (bench/paced.ts: at 50/s, and at 200/s after a second's warm-up). */
export const PACED_COUNTS = { slow: scaled(300), fast: scaled(1_000) };
const RAW_JOBS = scaled(2_000);
export const CONCURRENT_TURNS = scaled(5_000);
export const SLOW_LLM_MS = 2_000;

function benchScale(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!(n > 0 && n <= 5)) throw new Error(`BENCH_SCALE: a number in (0, 5] (got ${JSON.stringify(raw)})`);
  return n;
}

export interface StandIns {
  child: ChildProcess;
  llmUrl: string;
  tgUrl: string;
  tgToken: string;
  times(): Promise<{ llmIn: Map<string, number>; llmOut: Map<string, number>; sentAt: Map<string, number> }>;
  /** How many replies the Telegram stand-in got so far (cheap: no timestamps cross the IPC channel). */
  sentCount(): Promise<number>;
  /** The stand-ins' own CPU time so far (user + system, ms): what answering the pipeline costs the shared machine. */
  cpuMs(): Promise<number>;
  /** Resolves once every tag was answered (the stand-ins watch; nothing crosses the IPC channel meanwhile), else how many were. */
  awaitSent(tags: string[], timeoutMs: number): Promise<{ done: boolean; answered: number }>;
  stop(): Promise<void>;
}

export async function startStandIns(llmDelayMs: number): Promise<StandIns> {
  const child = fork(join(import.meta.dirname, 'stand-ins.ts'), [], {
    // BENCH_STANDINS_PROFILE=<dir>: a CPU profile of the stand-ins' whole process, written when it stops.
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_STANDINS_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_STANDINS_PROFILE}`] : [])],
    env: { ...process.env, LLM_DELAY_MS: String(llmDelayMs) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ llmUrl: string; tgUrl: string; tgToken: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { llmUrl: string; tgUrl: string; tgToken: string }));
    child.once('exit', (code) => reject(new Error(`stand-ins exited with ${code}`)));
  });
  // One question to the stand-ins over IPC and its answer (they answer one at a time, in order).
  const ask = <T>(message: object): Promise<T> =>
    new Promise((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send(message);
    });
  return {
    child,
    ...ready,
    times: async () => {
      const t = await ask<{ llmIn: [string, number][]; llmOut: [string, number][]; sentAt: [string, number][] }>({ type: 'times' });
      return { llmIn: new Map(t.llmIn), llmOut: new Map(t.llmOut), sentAt: new Map(t.sentAt) };
    },
    sentCount: async () => (await ask<{ n: number }>({ type: 'count' })).n,
    cpuMs: async () => (await ask<{ ms: number }>({ type: 'cpu' })).ms,
    awaitSent: (tags, timeoutMs) => ask({ type: 'await', tags, timeoutMs }),
    stop: async () => {
      child.send({ type: 'stop' });
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export type BenchStore = 'sqlite' | 'postgres';

/** The servers a run on `store` uses, for their CPU (bench/servers-cpu.ts): Redis, and PostgreSQL's server when it is the store. */
const benchServersCpu = (store: BenchStore) => serversCpu(REDIS_URL, store === 'postgres' ? BENCH_ADMIN_URL : undefined);

/** What the figures of each backend are printed as. */
export const FIGURE_PREFIX: Record<BenchStore, string> = { sqlite: 'queue', postgres: 'queue_pg' };

async function startBenchHerald(s: StandIns, concurrency: number, store: BenchStore): Promise<{ herald: Herald; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  const prefix = `herald-bench-${process.pid}-${Date.now().toString(36)}`;
  const database = store === 'postgres' ? await createBenchDatabase() : null;
  const { app, config: configModule, logger } = await gateway();
  const config = configModule.loadConfig({
    file: null,
    env: {
      REDIS_URL,
      HERALD_REDIS_PREFIX: prefix,
      HERALD_DB: join(dir, 'herald.db'),
      ...(database ? { HERALD_DATABASE_URL: database.url } : {}),
      // Default 10, like a deployment; set it to see what a bigger pool buys.
      ...(database && process.env.HERALD_DATABASE_POOL_SIZE ? { HERALD_DATABASE_POOL_SIZE: process.env.HERALD_DATABASE_POOL_SIZE } : {}),
      HERALD_PORT: '0',
      HERALD_MODEL: 'openai:gpt-4.1-mini',
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: s.llmUrl,
      TELEGRAM_BOT_TOKEN: s.tgToken,
      TELEGRAM_API_ROOT: s.tgUrl,
      GATEWAY_ALLOW_ALL_USERS: 'true',
      HERALD_BUSY_INPUT_MODE: 'queue',
      HERALD_WORKER_CONCURRENCY: String(concurrency),
      HERALD_USER_RATE_LIMIT: '0',
      // Comparable with the figures in bench/RESULTS.md: plain replies (streaming became the default later).
      HERALD_STREAMING: 'false',
      // The default unless a run sets it, to see what another limit does.
      ...(process.env.HERALD_TURN_PREP_LIMIT ? { HERALD_TURN_PREP_LIMIT: process.env.HERALD_TURN_PREP_LIMIT } : {}),
    },
  });
  const removeState = async (): Promise<void> => {
    await deleteRedisPrefix(prefix, REDIS_URL);
    if (process.env.BENCH_KEEP_DB === '1') console.log(`(BENCH_KEEP_DB: the store is kept in ${dir})`);
    else rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  };
  const herald = await app.startHerald(config, logger.createLogger({ level: process.env.BENCH_LOG ?? 'silent' })).catch(async (err: unknown) => {
    await removeState();
    throw err;
  });
  return {
    herald,
    cleanup: async () => {
      await herald.stop();
      await removeState();
    },
  };
}

type Router = NonNullable<Herald['router']>;

/** `fn` against fresh stand-ins and a Herald on a fresh store; all of it is removed afterwards, failure or not. */
export async function withBenchHerald<T>(
  llmDelayMs: number,
  concurrency: number,
  store: BenchStore,
  fn: (s: StandIns, router: Router) => Promise<T>,
): Promise<T> {
  const s = await startStandIns(llmDelayMs);
  try {
    const { herald, cleanup } = await startBenchHerald(s, concurrency, store);
    try {
      return await fn(s, herald.router!);
    } finally {
      await cleanup();
    }
  } finally {
    await s.stop();
  }
}

export function message(session: number, tag: string): InboundMessage {
  const chat = 100_000 + session;
  return {
    platform: 'telegram',
    messageId: `${chat}:${tag}`,
    conversationId: `telegram:${chat}`,
    chatType: 'dm',
    chatId: String(chat),
    userId: String(chat),
    text: tag,
    attachments: [],
    platformMessageId: '1',
    sentAt: Date.now(),
  };
}

/**
 * Waits until every tag was answered, then reads the timestamps once. The stand-ins process does the watching:
 * polling the timestamps from here would move thousands of them over IPC every 100 ms, in the measured process.
 */
export async function waitForSent(s: StandIns, tags: string[], timeoutMs: number): Promise<Awaited<ReturnType<StandIns['times']>>> {
  const { done, answered } = await s.awaitSent(tags, timeoutMs);
  if (!done) throw new Error(`only ${answered}/${tags.length} replies arrived`);
  return s.times();
}

export const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

async function rawBullmqJobsPerSecond(): Promise<number> {
  const prefix = `herald-bench-raw-${process.pid}`;
  const connection = { url: REDIS_URL, maxRetriesPerRequest: null };
  const queue = new Queue('raw', { connection, prefix });
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((r) => (finished = r));
  const worker = new Worker('raw', async () => {}, { connection, prefix, concurrency: 50 });
  worker.on('completed', () => {
    if (++done === RAW_JOBS) finished();
  });
  await worker.waitUntilReady();
  const started = now();
  await Promise.all(Array.from({ length: RAW_JOBS }, (_, i) => queue.add('noop', { i }, { jobId: `raw-${i}` })));
  await all;
  const elapsed = now() - started;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await deleteRedisPrefix(prefix, REDIS_URL);
  return (RAW_JOBS / elapsed) * 1000;
}

/** The queue benchmark on one store; figures printed as `queue.*` (SQLite) or `queue_pg.*` (PostgreSQL). */
export async function benchQueue(store: BenchStore = 'sqlite'): Promise<Record<string, number>> {
  installWorkCounters();
  const results: Record<string, number> = {};
  const printed = (): Record<string, number> => printFigures(FIGURE_PREFIX[store], results);

  // 1 + 2: zero-latency LLM.
  if (process.env.BENCH_ONLY !== 'concurrent')
    await withBenchHerald(0, 50, store, async (s, router) => {
      s.child.send({ type: 'chats', ids: [...range(100_000, THROUGHPUT_SESSIONS), ...pacedChats(100_000 + PACED_FIRST_SESSION)] });
      // Warm up connections and JIT.
      const warm = Array.from({ length: 50 }, (_, i) => `w${i}`);
      await Promise.all(warm.map((tag, i) => router.handle(message(i, tag))));
      await waitForSent(s, warm, 30_000);

      // Paced first: latency is measured on a quiet system, not behind the throughput run's leftovers (bench/paced.ts),
      // each message in a conversation with no turn running.
      const paced: PacedRun<InboundMessage> = { handle: (m) => router.handle(m), answered: (tags) => waitForSent(s, tags, 60_000) };
      const msg = (n: number, tag: string): InboundMessage => message(PACED_FIRST_SESSION + n, tag);
      if (process.env.BENCH_ONLY !== 'throughput') Object.assign(results, await pacedFigures(paced, PACED_COUNTS, msg, `${FIGURE_PREFIX[store]}-paced-200`));

      if (process.env.BENCH_ONLY === 'paced') return;
      const servers = await benchServersCpu(store);
      const figures = await throughputFigures({
        label: 'queue',
        profileName: `${FIGURE_PREFIX[store]}-throughput`,
        count: THROUGHPUT_MESSAGES,
        tag: (i) => `t${i}`,
        submit: (tag, i) => router.handle(message(i % THROUGHPUT_SESSIONS, tag)),
        answered: (tags) => waitForSent(s, tags, 120_000),
        standInsCpuMs: () => s.cpuMs(),
        ...(store === 'postgres' && { walBytes }),
        servers,
      }).finally(() => servers.close());
      Object.assign(results, figures);
    });

  if (process.env.BENCH_ONLY === 'throughput' || process.env.BENCH_ONLY === 'paced') return printed();
  // 3: raw BullMQ (the same on either store: measured once, with SQLite).
  if (process.env.BENCH_ONLY !== 'concurrent' && store === 'sqlite') {
    results.raw_bullmq_jobs_per_s = await rawBullmqJobsPerSecond();
    results.herald_to_raw_bullmq_ratio = results.messages_per_s / results.raw_bullmq_jobs_per_s;
  }

  // 4: 5,000 concurrent 2-second turns on one worker process.
  await withBenchHerald(SLOW_LLM_MS, CONCURRENT_TURNS, store, async (s, router) => {
    s.child.send({ type: 'chats', ids: range(110_000, CONCURRENT_TURNS) });
    let peakRss = process.memoryUsage().rss;
    let peakHeap = process.memoryUsage().heapUsed;
    const baseRss = peakRss;
    const baseHeap = peakHeap;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 50);
    const tags = Array.from({ length: CONCURRENT_TURNS }, (_, i) => `c${i}`);
    const servers = await benchServersCpu(store);
    const serversBefore = await servers.read();
    const standInsBefore = await s.cpuMs();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpuBefore = process.cpuUsage();
    const workBefore = snapshot();
    const walBefore = store === 'postgres' ? await walBytes() : 0;
    resetDetail();
    const started = now();
    const t = await profiled(`${FIGURE_PREFIX[store]}-concurrent`, async () => {
      await Promise.all(tags.map((tag, i) => router.handle(message(10_000 + i, tag))));
      results.concurrent_submitted_s = (now() - started) / 1000;
      return waitForSent(s, tags, 300_000);
    }).catch(async (err: unknown) => {
      await servers.close();
      throw err;
    });
    clearInterval(sampler);
    const cpu = process.cpuUsage(cpuBefore);
    // CPU time of this process (all its threads) per turn: unlike the finish time, hardly moved by other load.
    results.concurrent_cpu_ms_per_turn = (cpu.user + cpu.system) / 1000 / CONCURRENT_TURNS;
    const work = perMessage(workBefore, snapshot(), CONCURRENT_TURNS);
    results.concurrent_sql_statements_per_turn = work.sqlStatements;
    results.concurrent_redis_commands_per_turn = work.redisCommands;
    if (store === 'postgres') results.concurrent_wal_bytes_per_turn = ((await walBytes()) - walBefore) / CONCURRENT_TURNS;
    const standInsTurnMs = ((await s.cpuMs()) - standInsBefore) / CONCURRENT_TURNS;
    for (const [name, value] of Object.entries(
      serversCpuFigures(serversBefore, await servers.read(), CONCURRENT_TURNS, 'turn', results.concurrent_cpu_ms_per_turn + standInsTurnMs),
    ))
      results[`concurrent_${name}`] = value;
    await servers.close();
    printDetail('concurrent', CONCURRENT_TURNS);
    loop.disable();
    // Event-loop stalls while the turns ran (GC pauses, long synchronous stretches).
    results.concurrent_loop_delay_p99_ms = loop.percentile(99) / 1e6;
    results.concurrent_loop_delay_max_ms = loop.max / 1e6;
    const lastSent = Math.max(...tags.map((tag) => t.sentAt.get(tag) ?? 0));
    // Where the time goes: getting every turn to its LLM call, or from the replies to the sends.
    const llmIn = tags.map((tag) => (t.llmIn.get(tag) ?? 0) - started);
    const llmToSend = tags.map((tag) => (t.sentAt.get(tag) ?? 0) - (t.llmOut.get(tag) ?? 0));
    results.concurrent_first_llm_in_s = Math.min(...llmIn) / 1000;
    results.concurrent_llm_in_p10_s = percentile(llmIn, 10) / 1000;
    results.concurrent_llm_in_p50_s = percentile(llmIn, 50) / 1000;
    results.concurrent_last_llm_in_s = Math.max(...llmIn) / 1000;
    results.concurrent_llm_to_send_p50_s = percentile(llmToSend, 50) / 1000;
    results.concurrent_llm_to_send_p99_s = percentile(llmToSend, 99) / 1000;
    // Back near the start once the turns are done? A second after the last reply, with no collection forced: Herald
    // runs as in production, where nothing calls gc() (a forced full collection every second, as this benchmark did
    // before, kept RSS at its peak: each one put off V8's own memory reducer).
    await sleep(1_000);
    const after = process.memoryUsage();
    results.concurrent_rss_after_mb = after.rss / 1024 / 1024;
    results.concurrent_js_heap_after_mb = after.heapUsed / 1024 / 1024;
    results.concurrent_js_heap_total_after_mb = after.heapTotal / 1024 / 1024;
    results.concurrent_external_after_mb = after.external / 1024 / 1024;
    // ... and once Herald, idle, has given the memory back by itself (ops/memory-trim.ts; no collection forced from
    // here, which would also keep the process from looking idle): how long until RSS is at most 1.5 × the start level
    // again (a leak never gets there), at most a minute.
    const after1s = now();
    let settled = after.rss;
    while (settled > baseRss * 1.5 && now() - after1s < 60_000) {
      await sleep(1_000);
      settled = process.memoryUsage().rss;
    }
    results.concurrent_rss_settled_mb = settled / 1024 / 1024;
    results.concurrent_rss_settled_s = (now() - after1s) / 1000 + 1;
    // And where it is half a minute after the last reply (V8 may give back more after the first drop).
    while (now() - after1s < 29_000) await sleep(1_000);
    results.concurrent_rss_30s_mb = process.memoryUsage().rss / 1024 / 1024;
    results.concurrent_rss_start_mb = baseRss / 1024 / 1024;
    results.concurrent_js_heap_start_mb = baseHeap / 1024 / 1024;
    results.concurrent_turns = CONCURRENT_TURNS;
    results.concurrent_llm_ms = SLOW_LLM_MS;
    results.concurrent_finish_s = (lastSent - started) / 1000;
    results.concurrent_peak_rss_mb = peakRss / 1024 / 1024;
    results.concurrent_rss_growth_mb = (peakRss - baseRss) / 1024 / 1024;
    results.concurrent_peak_js_heap_mb = peakHeap / 1024 / 1024;
  });

  return printed();
}

function printFigures(prefix: string, results: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(results)) console.log(`${prefix}.${k} = ${Number.isInteger(v) ? v : v.toFixed(2)}`);
  return results;
}

/** The stores BENCH_STORE asks for (default both); PostgreSQL is skipped, with a line saying why, when it does not answer. */
export async function benchStores(): Promise<BenchStore[]> {
  const asked = process.env.BENCH_STORE;
  if (asked !== undefined && asked !== 'sqlite' && asked !== 'postgres') throw new Error(`BENCH_STORE: sqlite or postgres (got ${JSON.stringify(asked)})`);
  const stores: BenchStore[] = asked ? [asked] : ['sqlite', 'postgres'];
  if (!stores.includes('postgres')) return stores;
  const why = await postgresUnavailable();
  if (why === null) return stores;
  console.log(`(PostgreSQL skipped: ${why}; set HERALD_BENCH_DATABASE_URL)`);
  return stores.filter((s) => s !== 'postgres');
}

/**
 * The queue benchmark on `store` in a fresh process (this file run as a child), its figures sent back: every run
 * starts from the same heap, so the peak RSS of one backend's run does not carry into the other's. `env` adds to
 * the environment (BENCH_ONLY for one part); `quiet` leaves the child's printing out.
 */
export async function benchQueueInChild(store: BenchStore, env: NodeJS.ProcessEnv = {}, quiet = false): Promise<Record<string, number>> {
  return figuresFromChild(import.meta.filename, {
    execArgv: [...BENCH_NODE_ARGS, '--expose-gc'],
    env: { ...process.env, ...env, BENCH_STORE: store },
    what: `the ${store} queue benchmark`,
    quiet,
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  (async () => {
    for (const store of await benchStores()) {
      await sendFigures(await benchQueue(store));
    }
  })().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
