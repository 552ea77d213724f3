/**
 * The memory trim: one full collection once the process is quiet after its heap grew, none while busy or when
 * nothing grew, none without `--expose-gc`; and the real collection it runs does hand a dropped burst's heap back.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { exposedFullCollection, startMemoryTrim } from './memory-trim.js';

const MB = 1024 * 1024;
const silent = createLogger({ level: 'silent' });

/** A trim over a made-up heap and loop: `heap` and `busy` are what the next check sees. */
function scripted(opts: { quietChecks?: number; growthMb?: number; rssAfterCollection?: number } = {}) {
  const state = { heap: 100 * MB, rss: 300 * MB, busy: 0.9, collections: 0 };
  const trim = startMemoryTrim({
    gc: () => {
      state.collections++;
      state.heap = 100 * MB;
      state.rss = opts.rssAfterCollection ?? 300 * MB;
    },
    log: silent,
    intervalMs: 3_600_000,
    quietChecks: opts.quietChecks ?? 3,
    growthBytes: (opts.growthMb ?? 64) * MB,
    heapUsed: () => state.heap,
    rss: () => state.rss,
    utilization: () => state.busy,
  });
  return { state, trim };
}

describe('memory trim', () => {
  it('collects once after the given number of quiet checks, when the heap grew past the threshold', () => {
    const { state, trim } = scripted();
    state.heap = 600 * MB;
    // Busy: the burst is still running.
    expect([trim.check(), trim.check()]).toEqual([false, false]);
    state.busy = 0.01;
    expect([trim.check(), trim.check()]).toEqual([false, false]);
    expect(trim.check()).toBe(true);
    expect(state.collections).toBe(1);
    // Back at the baseline: quiet for ever after, no further collection.
    for (let i = 0; i < 10; i++) expect(trim.check()).toBe(false);
    expect(state.collections).toBe(1);
    trim.stop();
  });

  it('starts counting quiet checks again after a busy one', () => {
    const { state, trim } = scripted();
    state.heap = 600 * MB;
    state.busy = 0.01;
    trim.check();
    trim.check();
    state.busy = 0.5;
    expect(trim.check()).toBe(false);
    state.busy = 0.01;
    expect([trim.check(), trim.check(), trim.check()]).toEqual([false, false, true]);
    trim.stop();
  });

  it('leaves a heap that grew less than the threshold alone, and counts growth from the smallest heap seen', () => {
    const { state, trim } = scripted({ quietChecks: 1 });
    state.busy = 0;
    state.heap = 150 * MB;
    // The first look sees the heap move (not quiet), the second a still heap 50 MB over the start: too little.
    expect([trim.check(), trim.check()]).toEqual([false, false]);
    // V8 collected by itself: 80 MB is the new floor, so 150 MB is now 70 MB of growth.
    state.heap = 80 * MB;
    expect([trim.check(), trim.check()]).toEqual([false, false]);
    state.heap = 150 * MB;
    expect([trim.check(), trim.check()]).toEqual([false, true]);
    trim.stop();
  });

  it('leaves a process that keeps allocating to V8, however little its loop is busy', () => {
    const { state, trim } = scripted({ quietChecks: 1 });
    state.busy = 0.01;
    // Light steady load: the heap climbs and V8's own collections drop it, by megabytes between two looks.
    for (let i = 0; i < 10; i++) {
      state.heap = (i % 2 === 0 ? 600 : 560) * MB;
      expect(trim.check()).toBe(false);
    }
    expect(state.collections).toBe(0);
    // It stops allocating: the next look (one quiet look is enough here) collects the peak, once.
    expect([trim.check(), trim.check()]).toEqual([true, false]);
    trim.stop();
  });

  it("collects when the heap in use is small again but the process kept the burst's memory (V8 collected and kept the pages)", () => {
    const { state, trim } = scripted();
    state.rss = 830 * MB;
    state.busy = 0.01;
    // The heap in use never moved from its floor: only the resident size says there is memory to give back.
    expect([trim.check(), trim.check(), trim.check()]).toEqual([false, false, true]);
    expect(state.collections).toBe(1);
    for (let i = 0; i < 10; i++) expect(trim.check()).toBe(false);
    trim.stop();
  });

  it('memory a collection cannot give back (outside the heap) is the new floor: no collection again until it grows', () => {
    const { state, trim } = scripted({ quietChecks: 1, rssAfterCollection: 700 * MB });
    state.rss = 700 * MB;
    state.busy = 0;
    expect(trim.check()).toBe(true);
    for (let i = 0; i < 10; i++) expect(trim.check()).toBe(false);
    // Another burst grows it past the floor again.
    state.rss = 780 * MB;
    expect(trim.check()).toBe(true);
    expect(state.collections).toBe(2);
    trim.stop();
  });

  it('does nothing without gc (node started without --expose-gc)', () => {
    let looked = 0;
    const trim = startMemoryTrim({ gc: undefined, log: silent, quietChecks: 1, growthBytes: 0, heapUsed: () => ++looked * MB, utilization: () => 0 });
    expect([trim.check(), trim.check()]).toEqual([false, false]);
    expect(looked).toBe(0);
    trim.stop();
  });

  it("the last-resort collection gives a dropped burst's heap back", () => {
    // What `--expose-gc` gives the gateway, obtained here for this test's process only.
    setFlagsFromString('--expose-gc');
    const original = globalThis.gc;
    globalThis.gc = runInNewContext('gc') as NodeJS.GCFunction;
    try {
      const collect = exposedFullCollection();
      expect(collect).toBeTypeOf('function');
      collect?.();
      const seen: number[] = [];
      const heapUsed = (): number => {
        seen.push(getHeapStatistics().used_heap_size);
        return seen[seen.length - 1];
      };
      const trim = startMemoryTrim({ gc: collect, log: silent, quietChecks: 1, growthBytes: 32 * MB, utilization: () => 0, heapUsed });
      trim.stop();
      // A burst's garbage: ~80 MB of arrays (V8's large-object space: a young collection cannot free them).
      let burst: number[][] | null = Array.from({ length: 200 }, () => new Array<number>(50_000).fill(1.5));
      // The look during the burst sees the heap move: not quiet yet.
      expect(trim.check()).toBe(false);
      expect(burst.length).toBe(200);
      burst = null;
      expect(trim.check()).toBe(true);
      const [baseline, , beforeCollection, afterCollection] = seen;
      expect(beforeCollection - baseline).toBeGreaterThan(32 * MB);
      expect(afterCollection).toBeLessThan(baseline + 16 * MB);
    } finally {
      globalThis.gc = original;
    }
  });

  it('npm start and the Docker image run node with --expose-gc', () => {
    const root = resolve(import.meta.dirname, '../../../../..');
    const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(/node --expose-gc .*apps\/gateway\/bin\/start\.js/);
    expect(readFileSync(resolve(root, 'Dockerfile'), 'utf8')).toMatch(/ENTRYPOINT \["node", "--expose-gc", "apps\/gateway\/dist\/main\.js"\]/);
  });
});
