/**
 * Gives memory back once the process goes quiet after a burst.
 *
 * V8 frees the garbage of a burst (and shrinks its heap) by itself only when its memory reducer starts, and that
 * starts after a collection that runs while allocation slows down. A burst that ends between two collections leaves
 * the heap at its peak for as long as the process stays quiet: measured, 870-900 MB of RSS still a minute after
 * 5,000 concurrent turns whose live data after a full collection was 104 MB. So every few seconds this looks at the
 * event loop and the heap: once the process has been quiet for a while (little work and no allocation, see
 * `quietHeapChangeBytes`; one under light steady load is left to V8) and the heap holds well more than after the
 * last collection — or the process's resident memory is well above its smallest since then — one full collection
 * runs, at a moment nobody is waiting for this process.
 *
 * It needs `gc`, which Node only exposes when started with `--expose-gc` (`npm start` and the Dockerfile do). Without
 * it nothing runs and V8's own heuristics are all there is.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { Logger } from '../logger.js';

export interface MemoryTrimOptions {
  /** A full collection: `globalThis.gc` under `--expose-gc`; absent, the trim is off. */
  gc: (() => void) | undefined;
  log: Logger;
  /** How often the loop and the heap are looked at (default 2 s). */
  intervalMs?: number;
  /** Quiet checks in a row before the process counts as quiet (default 3). */
  quietChecks?: number;
  /** A quiet check: the event loop busy less than this share of the time (0-1, default 0.05) since the last check ... */
  quietUtilization?: number;
  /**
   * ... and the heap changed by less than this (bytes, default 2 MB). A process under light but steady load allocates: its heap
   * climbs and drops with V8's own collections, which then also start V8's memory reducer. Only one that stopped
   * allocating can sit at a peak for good, and only there is a full collection's pause (≈ 0.25 s) nobody's wait.
   */
  quietHeapChangeBytes?: number;
  /**
   * How much more the heap must hold than after the last collection, or the process's resident memory than its
   * smallest since then (bytes, default 64 MB), to be worth a collection.
   */
  growthBytes?: number;
  /** The heap in use (bytes); V8's figure unless a test gives its own. */
  heapUsed?: () => number;
  /** The process's resident memory (bytes); Node's figure unless a test gives its own. */
  rss?: () => number;
  /** The event loop's busy share since the last call (0-1); perf_hooks' unless a test gives its own. */
  utilization?: () => number;
}

export interface MemoryTrim {
  /** One look, as the timer takes it: true when it collected. */
  check(): boolean;
  stop(): void;
}

const MB = 1024 * 1024;

function loopUtilization(): () => number {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const since = performance.eventLoopUtilization(now, last);
    last = now;
    return since.utilization;
  };
}

/**
 * The collection to run, when Node exposes `gc`: the "last resort" flavour, which collects until nothing more goes
 * and hands the freed pages back to the system. A regular full collection (`gc()`) emptied the heap after the
 * 5,000-turn burst (599 -> 104 MB) but RSS stayed at 875 MB; this one brought it to 265 MB (the process started at
 * 293), in a pause of ≈ 0.25 s once per burst.
 */
export function exposedFullCollection(): (() => void) | undefined {
  const gc = globalThis.gc;
  return gc && (() => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }));
}

/** Starts the checks (an unref'd timer: it never keeps the process alive); `check()` runs one look at once. */
export function startMemoryTrim(opts: MemoryTrimOptions): MemoryTrim {
  const { gc, log, intervalMs = 2_000, quietChecks = 3, quietUtilization = 0.05, quietHeapChangeBytes = 2 * MB, growthBytes = 64 * MB } = opts;
  if (!gc) {
    log.debug('memory trim off: node runs without --expose-gc');
    return { check: () => false, stop: () => {} };
  }
  const heapUsed = opts.heapUsed ?? (() => getHeapStatistics().used_heap_size);
  const rss = opts.rss ?? (() => process.memoryUsage.rss());
  const utilization = opts.utilization ?? loopUtilization();
  let baseline = heapUsed();
  let rssBaseline = rss();
  let previous = baseline;
  let quiet = 0;
  const check = (): boolean => {
    const busy = utilization();
    const used = heapUsed();
    const resident = rss();
    quiet = busy < quietUtilization && Math.abs(used - previous) < quietHeapChangeBytes ? quiet + 1 : 0;
    previous = used;
    // A collection V8 ran by itself lowers the baseline too: growth counts from the smallest heap seen since.
    baseline = Math.min(baseline, used);
    rssBaseline = Math.min(rssBaseline, resident);
    // The heap in use may be small again while the process still holds the burst's memory: V8 collected by itself
    // but kept the pages (measured: 127 MB in use, 833 MB resident a minute after the 5,000 turns, against 509 MB
    // before them). What the last-resort collection gives back shows in the resident size.
    const grown = used - baseline >= growthBytes || resident - rssBaseline >= growthBytes;
    if (quiet < quietChecks || !grown) return false;
    const started = performance.now();
    gc();
    const after = heapUsed();
    const residentAfter = rss();
    log.info(
      {
        heapBeforeMb: Math.round(used / MB),
        heapAfterMb: Math.round(after / MB),
        rssBeforeMb: Math.round(resident / MB),
        rssAfterMb: Math.round(residentAfter / MB),
        pauseMs: Math.round(performance.now() - started),
      },
      'quiet after a burst: memory given back',
    );
    // What the collection could not give back (memory outside V8's heap) is the new floor: no collection again
    // until the process grows past it.
    baseline = after;
    rssBaseline = residentAfter;
    previous = after;
    quiet = 0;
    return true;
  };
  const timer = setInterval(check, intervalMs);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
