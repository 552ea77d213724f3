/**
 * Soak: Herald (role `all`, SQLite) answering a steady stream of messages over many conversations for a long
 * time, to show that memory stays flat — workers keep no transcripts between jobs and every in-memory map is
 * bounded. RSS and JS heap (after a full GC) are sampled every few seconds; the slope of each over the run (least
 * squares, the first fifth left out as warm-up) is printed in MB/min. A leak shows as a slope that does not fall
 * towards 0 as the run gets longer.
 *
 *   BENCH_ONLY=soak npm run bench                                    the full soak (30 minutes)
 *   BENCH_SOAK_MINUTES=3 BENCH_SOAK_RATE=50 BENCH_SOAK_SESSIONS=5000 node --conditions=@herald/dist --import tsx --expose-gc bench/soak.ts
 *
 * Figures: soak.minutes, soak.messages, soak.answered, soak.rate_per_s, soak.sessions, soak.rss_start_mb,
 * soak.rss_end_mb, soak.rss_slope_mb_per_min, soak.heap_start_mb, soak.heap_end_mb, soak.heap_slope_mb_per_min.
 */
import { figuresFromChild, sendFigures } from './child.js';
import { pathToFileURL } from 'node:url';
import { BENCH_NODE_ARGS } from './gateway.js';
import { message, range, withBenchHerald } from './queue.js';

const SAMPLE_EVERY_MS = 5_000;
/** Session numbers of the soak (chat ids 100,000 + these), apart from the other runs'. */
const FIRST_SESSION = 30_000;

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!(n > 0)) throw new Error(`${name}: a positive number (got ${JSON.stringify(raw)})`);
  return n;
}

interface Sample {
  minute: number;
  rssMb: number;
  heapMb: number;
}

const mb = (bytes: number): number => bytes / 1024 / 1024;

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

function sample(started: number): Sample {
  // With --expose-gc the heap is measured after a full collection: what is still referenced, not garbage.
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { minute: (performance.now() - started) / 60_000, rssMb: mb(m.rss), heapMb: mb(m.heapUsed) };
}

export async function benchSoak(): Promise<Record<string, number>> {
  const minutes = positive('BENCH_SOAK_MINUTES', 30);
  const rate = positive('BENCH_SOAK_RATE', 50);
  const sessions = Math.round(positive('BENCH_SOAK_SESSIONS', 5_000));
  const llmMs = Number(process.env.BENCH_SOAK_LLM_MS ?? 50);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  return withBenchHerald(llmMs, 50, 'sqlite', async (s, router) => {
    s.child.send({ type: 'chats', ids: range(100_000 + FIRST_SESSION, sessions) });
    const samples: Sample[] = [];
    const started = performance.now();
    const endAt = started + minutes * 60_000;
    let sent = 0;
    let nextSample = started;
    let nextReport = started + 60_000;
    console.log(`# soak: ${rate} messages/s over ${sessions} conversations for ${minutes} min (LLM stand-in ${llmMs} ms)`);
    while (performance.now() < endAt) {
      // Paced by the clock, not by the previous send: the rate holds even when a send is slow.
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      while (sent < due) {
        void router.handle(message(FIRST_SESSION + (sent % sessions), `s${sent}`));
        sent++;
      }
      const now = performance.now();
      if (now >= nextSample) {
        samples.push(sample(started));
        nextSample += SAMPLE_EVERY_MS;
      }
      if (now >= nextReport) {
        const last = samples[samples.length - 1];
        const answered = await s.sentCount();
        console.log(`  ${last.minute.toFixed(1)} min: ${sent} sent, ${answered} answered, RSS ${last.rssMb.toFixed(0)} MB, heap ${last.heapMb.toFixed(1)} MB`);
        nextReport += 60_000;
      }
      await sleep(Math.max(1, Math.min(20, 1000 / rate)));
    }
    // Let the last replies arrive (bounded), then one more sample.
    const drainUntil = performance.now() + 60_000;
    let answered = await s.sentCount();
    while (answered < sent && performance.now() < drainUntil) {
      await sleep(200);
      answered = await s.sentCount();
    }
    samples.push(sample(started));
    const steady = samples.filter((p) => p.minute >= minutes / 5);
    const first = steady[0] ?? samples[0];
    const last = samples[samples.length - 1];
    return {
      minutes,
      messages: sent,
      answered,
      rate_per_s: rate,
      sessions,
      rss_start_mb: first.rssMb,
      rss_end_mb: last.rssMb,
      rss_slope_mb_per_min: slope(steady.map((p) => ({ x: p.minute, y: p.rssMb }))),
      heap_start_mb: first.heapMb,
      heap_end_mb: last.heapMb,
      heap_slope_mb_per_min: slope(steady.map((p) => ({ x: p.minute, y: p.heapMb }))),
    };
  });
}

export function printSoak(results: Record<string, number>): void {
  for (const [k, v] of Object.entries(results)) console.log(`soak.${k} = ${Number.isInteger(v) ? v : v.toFixed(3)}`);
}

/** The soak in a fresh process with --expose-gc (so heap samples are taken after a full collection). */
export async function benchSoakInChild(): Promise<Record<string, number>> {
  return figuresFromChild(import.meta.filename, { execArgv: [...BENCH_NODE_ARGS, '--expose-gc'], env: process.env, what: 'the soak' });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchSoak().then(
    async (figures) => {
      printSoak(figures);
      await sendFigures(figures);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
