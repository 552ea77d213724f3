/**
 * BENCH_ROUNDS=n (n ≥ 2) with `npm run bench`: after the full run, n alternating rounds of the floor and Herald on
 * SQLite — the throughput part, the 5,000 turns, then the paced runs — each in a fresh process, and the median of the ratios. On a
 * shared machine a single run's ratio moves with whatever else ran during each half (± 25 % here); runs of the two
 * back to back, several times, tell the code's difference from the machine's.
 */
import { benchFloorInChild } from './floor.js';
import { benchQueueInChild } from './queue.js';
import { median } from './timing.js';

/** The figures of each part compared, Herald's ÷ the floor's (both print them under the same names). */
const PARTS = {
  throughput: ['messages_per_s', 'cpu_ms_per_message', 'standins_cpu_ms_per_message'],
  concurrent: ['concurrent_finish_s', 'concurrent_cpu_ms_per_turn'],
  paced: ['in_to_llm_p99_at_200_ms', 'llm_to_send_p99_at_200_ms'],
} as const;

export function benchRounds(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new Error(`BENCH_ROUNDS: a whole number from 1 to 20 (got ${JSON.stringify(raw)})`);
  return n;
}

export async function runRounds(rounds: number): Promise<void> {
  for (const [part, names] of Object.entries(PARTS)) {
    const ratios = new Map<string, number[]>(names.map((n) => [n, []]));
    const heralds = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let round = 1; round <= rounds; round++) {
      const floor = await benchFloorInChild({ BENCH_ONLY: part }, true);
      const herald = await benchQueueInChild('sqlite', { BENCH_ONLY: part }, true);
      const line = names.map((n) => {
        const r = herald[n] / floor[n];
        ratios.get(n)?.push(r);
        heralds.get(n)?.push(herald[n]);
        return `${n} ${herald[n].toFixed(2)} ÷ ${floor[n].toFixed(2)} = ${r.toFixed(2)}`;
      });
      console.log(`round ${round} ${part}: ${line.join('; ')}`);
    }
    for (const [n, rs] of ratios) console.log(`herald_to_floor.${n}_median = ${median(rs).toFixed(2)}   (${rs.map((r) => r.toFixed(2)).join(', ')})`);
    // The paced goals are absolute (p99 ≤ 15 ms), not ratios: Herald's own median too.
    for (const [n, vs] of heralds) console.log(`queue.${n}_median = ${median(vs).toFixed(2)}   (${vs.map((v) => v.toFixed(2)).join(', ')})`);
  }
}
