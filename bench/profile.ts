/**
 * A CPU profile of one stretch of a benchmark (not of start-up and transpiling): `BENCH_PROFILE=<dir>` makes
 * `profiled(name, fn)` write `<dir>/<name>.cpuprofile` for the time `fn` runs; without it, `fn` just runs.
 * Read one with `npx tsx bench/profile-top.ts <file>`. `BENCH_HEAP_PROFILE=1` (with BENCH_PROFILE) samples what the
 * stretch allocates instead, garbage included (`<name>.heapprofile`: every allocation sampled, one per 32 KB on
 * average, whether or not it was collected before the end; Chrome DevTools' Memory panel opens it).
 * `BENCH_HEAP_PROFILE=survivors` samples only what outlived a young-generation collection (promoted to the old
 * generation, or still live at the end): what makes the old generation grow and the major collections run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

interface Profiler {
  what: string;
  ext: string;
  start(session: Session): Promise<void>;
  stop(session: Session): Promise<object>;
}

const CPU: Profiler = {
  what: 'CPU profile',
  ext: 'cpuprofile',
  async start(session) {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 500 });
    await session.post('Profiler.start');
  },
  stop: async (session) => (await session.post('Profiler.stop')).profile,
};

/** Allocations sampled; `survivors`: only those a young-generation collection did not free (promoted, or still live). */
const allocations = (survivors: boolean): Profiler => ({
  what: survivors ? 'profile of allocations that outlived a young-generation GC' : 'allocation profile',
  ext: 'heapprofile',
  async start(session) {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 32 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: !survivors,
    });
  },
  stop: async (session) => (await session.post('HeapProfiler.stopSampling')).profile,
});

/** BENCH_HEAP_PROFILE's values; any other (or none) takes a CPU profile. */
const HEAP_PROFILERS: Record<string, Profiler | undefined> = { '1': allocations(false), survivors: allocations(true) };

export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return fn();
  const profiler = HEAP_PROFILERS[process.env.BENCH_HEAP_PROFILE ?? ''] ?? CPU;
  const session = new Session();
  session.connect();
  await profiler.start(session);
  try {
    return await fn();
  } finally {
    const profile = await profiler.stop(session);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.${profiler.ext}`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`(${profiler.what} of ${name}: ${file})`);
    session.disconnect();
  }
}
