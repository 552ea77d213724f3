/** Clocks and summaries the benchmarks share. */
import { setTimeout as sleepFor } from 'node:timers/promises';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export const now = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number): Promise<void> => sleepFor(ms);

/** The value at `p` % of the sorted values (index ⌊p/100 · n⌋, the last for p = 100). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The middle value (the upper of the two middle ones for an even count). */
export const median = (values: readonly number[]): number => percentile(values, 50);
