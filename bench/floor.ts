/**
 * The floor: a plain pipeline doing only the necessary work per message, with the same libraries, the same
 * stand-ins, the same Redis and the same machine as Herald's queue benchmark (bench/queue.ts):
 *
 *   BullMQ job → a Redis lock per session → SQLite insert of the user message + history read →
 *   `openai` SDK streamed completion → SQLite insert of the answer → telegraf `sendMessage` → unlock.
 *
 * No commands, authorisation, progress, outbox or dedup. Herald's figures are printed as ratios to these
 * (`npm run bench`), so "how much does Herald's extra work cost" has one number per run.
 *
 * Run alone: npx tsx bench/floor.ts   (needs Redis on 127.0.0.1:6379)
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { Telegram } from 'telegraf';
import { installWorkCounters } from './counters.js';
import { profiled } from './profile.js';
import { deleteRedisPrefix } from '../test/helpers/cluster.js';
import { figuresFromChild, sendFigures } from './child.js';
import { now } from './timing.js';
import { pacedChats, pacedFigures, type PacedRun } from './paced.js';
import { serversCpu } from './servers-cpu.js';
import { throughputFigures } from './throughput.js';
import {
  CONCURRENT_TURNS,
  PACED_COUNTS,
  range,
  SLOW_LLM_MS,
  startStandIns,
  THROUGHPUT_MESSAGES,
  THROUGHPUT_SESSIONS,
  waitForSent,
  type StandIns,
} from './queue.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOCK_MS = 30_000;
const RETRY_LOCKED_MS = 20;

interface FloorJob {
  chat: number;
  text: string;
}

/** The paced runs' chats start here (bench/paced.ts: `pacedChats`). */
const FLOOR_PACED_CHAT = 201_000;

const UNLOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

async function startFloor(s: StandIns, concurrency: number): Promise<{ queue: Queue<FloorJob>; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-floor-'));
  const prefix = `herald-floor-${process.pid}-${Date.now().toString(36)}`;
  const db = new Database(join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE messages (id INTEGER PRIMARY KEY, chat INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL);
           CREATE INDEX messages_chat ON messages (chat, id);`);
  const insert = db.prepare('INSERT INTO messages (chat, role, content) VALUES (?, ?, ?)');
  const history = db.prepare('SELECT role, content FROM messages WHERE chat = ? ORDER BY id');
  const redis = new Redis(REDIS_URL);
  const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: s.llmUrl });
  const telegram = new Telegram(s.tgToken, { apiRoot: s.tgUrl });
  const connection = { url: REDIS_URL, maxRetriesPerRequest: null };
  const queue = new Queue<FloorJob>('floor', { connection, prefix });

  const handle = async (job: Job<FloorJob>, token?: string): Promise<void> => {
    const { chat, text } = job.data;
    const lockKey = `${prefix}:lock:${chat}`;
    const lock = randomUUID();
    if ((await redis.set(lockKey, lock, 'PX', LOCK_MS, 'NX')) !== 'OK') {
      await job.moveToDelayed(Date.now() + RETRY_LOCKED_MS, token);
      throw new DelayedError();
    }
    try {
      insert.run(chat, 'user', text);
      const messages = history.all(chat) as Array<{ role: 'user' | 'assistant'; content: string }>;
      const stream = await openai.chat.completions.create({ model: 'gpt-4.1-mini', messages, stream: true });
      let answer = '';
      for await (const chunk of stream) answer += chunk.choices[0]?.delta?.content ?? '';
      insert.run(chat, 'assistant', answer);
      await telegram.sendMessage(chat, answer);
    } finally {
      await redis.eval(UNLOCK, 1, lockKey, lock);
    }
  };
  const worker = new Worker<FloorJob>('floor', handle, { connection, prefix, concurrency, removeOnComplete: { count: 1000 } });
  worker.on('failed', (job, err) => console.error(`floor job ${job?.id} failed:`, err.message));
  await worker.waitUntilReady();
  return {
    queue,
    stop: async () => {
      await worker.close();
      await queue.close();
      redis.disconnect();
      db.close();
      await deleteRedisPrefix(prefix, REDIS_URL);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const submit = (queue: Queue<FloorJob>, chat: number, tag: string): Promise<unknown> => queue.add('m', { chat, text: tag }, { jobId: `${chat}-${tag}` });

export async function benchFloor(): Promise<Record<string, number>> {
  installWorkCounters();
  const results: Record<string, number> = {};

  if (process.env.BENCH_ONLY !== 'concurrent') {
    const s = await startStandIns(0);
    const { queue, stop } = await startFloor(s, 50);
    s.child.send({ type: 'chats', ids: [...range(200_000, THROUGHPUT_SESSIONS), ...pacedChats(FLOOR_PACED_CHAT)] });
    const warm = Array.from({ length: 50 }, (_, i) => `fw${i}`);
    await Promise.all(warm.map((tag, i) => submit(queue, 200_000 + i, tag)));
    await waitForSent(s, warm, 30_000);

    // The same paced runs as Herald's (bench/paced.ts): what the machine and the libraries alone add, event in (the
    // job added) → LLM request and LLM reply → send, at 50 and at 200 messages/s.
    const paced: PacedRun<FloorJob> = { handle: (m) => submit(queue, m.chat, m.text), answered: (tags) => waitForSent(s, tags, 60_000) };
    const msg = (n: number, tag: string): FloorJob => ({ chat: FLOOR_PACED_CHAT + n, text: tag });
    if (process.env.BENCH_ONLY !== 'throughput') Object.assign(results, await pacedFigures(paced, PACED_COUNTS, msg, 'floor-paced-200'));
    if (process.env.BENCH_ONLY !== 'paced') {
      const servers = await serversCpu(REDIS_URL);
      Object.assign(
        results,
        await throughputFigures({
          label: 'floor',
          profileName: 'floor-throughput',
          count: THROUGHPUT_MESSAGES,
          tag: (i) => `ft${i}`,
          submit: (tag, i) => submit(queue, 200_000 + (i % THROUGHPUT_SESSIONS), tag),
          answered: (tags) => waitForSent(s, tags, 120_000),
          standInsCpuMs: () => s.cpuMs(),
          servers,
        }).finally(() => servers.close()),
      );
    }
    await stop();
    await s.stop();
  }

  if (process.env.BENCH_ONLY !== 'throughput' && process.env.BENCH_ONLY !== 'paced') {
    const s = await startStandIns(SLOW_LLM_MS);
    const { queue, stop } = await startFloor(s, CONCURRENT_TURNS);
    s.child.send({ type: 'chats', ids: range(210_000, CONCURRENT_TURNS) });
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    const tags = Array.from({ length: CONCURRENT_TURNS }, (_, i) => `fc${i}`);
    const cpuBefore = process.cpuUsage();
    const started = now();
    const t = await profiled('floor-concurrent', async () => {
      await Promise.all(tags.map((tag, i) => submit(queue, 210_000 + i, tag)));
      return waitForSent(s, tags, 300_000);
    });
    clearInterval(sampler);
    const cpu = process.cpuUsage(cpuBefore);
    results.concurrent_cpu_ms_per_turn = (cpu.user + cpu.system) / 1000 / CONCURRENT_TURNS;
    const lastSent = Math.max(...tags.map((tag) => t.sentAt.get(tag) ?? 0));
    results.concurrent_finish_s = (lastSent - started) / 1000;
    results.concurrent_peak_rss_mb = peakRss / 1024 / 1024;
    await stop();
    await s.stop();
  }

  for (const [k, v] of Object.entries(results)) console.log(`floor.${k} = ${Number.isInteger(v) ? v : v.toFixed(2)}`);
  return results;
}

/**
 * The floor in a fresh process, as Herald's queue benchmark runs in one (`benchQueueInChild`): neither side gets a
 * process the agent-loop benchmark has already warmed (its JIT, its heap's size), and each peak RSS is its own.
 */
export function benchFloorInChild(env: NodeJS.ProcessEnv = {}, quiet = false): Promise<Record<string, number>> {
  return figuresFromChild(import.meta.filename, { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, what: 'the floor', quiet });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchFloor().then(
    async (figures) => {
      await sendFigures(figures);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
