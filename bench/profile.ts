/**
 * A CPU profile of one stretch of a benchmark (not of start-up and transpiling): `BENCH_PROFILE=<dir>` makes
 * `profiled(name, fn)` write `<dir>/<name>.cpuprofile` for the time `fn` runs; without it, `fn` just runs.
 * Read one with `npx tsx bench/profile-top.ts <file>`. `BENCH_HEAP_PROFILE=1` (with BENCH_PROFILE) samples what the
 * stretch allocates instead, garbage included (`<name>.heapprofile`; `npx tsx bench/profile-top.ts <file>` reads
 * that too).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  if (process.env.BENCH_HEAP_PROFILE === '1') return heapProfiled(session, dir, name, fn);
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`(CPU profile of ${name}: ${file})`);
    session.disconnect();
  }
}

/** Every allocation sampled (one per 32 KB on average), whether or not it was collected before the end. */
async function heapProfiled<T>(session: Session, dir: string, name: string, fn: () => Promise<T>): Promise<T> {
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 32 * 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.heapprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`(allocation profile of ${name}: ${file})`);
    session.disconnect();
  }
}
