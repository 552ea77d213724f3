/**
 * BENCH_ROUNDS=n (n ≥ 2) with `npm run bench`: after the full run, n alternating rounds of the floor and Herald on
 * SQLite — the throughput part, the 5,000 turns, then the paced runs — each in a fresh process, and the median of the ratios. On a
 * shared machine a single run's ratio moves with whatever else ran during each half (± 25 % here); runs of the two
 * back to back, several times, tell the code's difference from the machine's. Then, when PostgreSQL answers, n rounds
 * of Herald on PostgreSQL and on SQLite the same way (the throughput part and the 5,000 turns), the store that goes
 * first alternating: the full run measures SQLite first and PostgreSQL minutes later, and which goes first moved the
 * ratio by a tenth on one machine (bench/RESULTS.md, seventh pass).
 */
import { benchFloorInChild } from './floor.js';
import { benchQueueInChild } from './queue.js';
import { median } from './timing.js';

/** The figures of each part compared, Herald's ÷ the floor's (both print them under the same names). */
const PARTS = {
  throughput: ['messages_per_s', 'cpu_ms_per_message', 'standins_cpu_ms_per_message', 'machine_cpu_ms_per_message'],
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
  const heralds = await compareInRounds({
    parts: PARTS,
    rounds,
    ratioName: 'herald_to_floor',
    top: (part) => benchQueueInChild('sqlite', { BENCH_ONLY: part }, true),
    bottom: (part) => benchFloorInChild({ BENCH_ONLY: part }, true),
  });
  // The paced goals are absolute (p99 ≤ 15 ms), not ratios: Herald's own median too.
  for (const [n, vs] of heralds) console.log(`queue.${n}_median = ${median(vs).toFixed(2)}   (${vs.map((v) => v.toFixed(2)).join(', ')})`);
}

/** The figures compared between the stores, PostgreSQL's ÷ SQLite's (issue 54's goals: ≥ 0.8 and ≤ 1.2). */
const STORE_PARTS = {
  throughput: ['messages_per_s', 'cpu_ms_per_message', 'machine_cpu_ms_per_message'],
  concurrent: ['concurrent_finish_s', 'concurrent_cpu_ms_per_turn', 'concurrent_machine_cpu_ms_per_turn'],
} as const;

export async function runStoreRounds(rounds: number): Promise<void> {
  await compareInRounds({
    parts: STORE_PARTS,
    rounds,
    ratioName: 'pg_to_sqlite',
    top: (part) => benchQueueInChild('postgres', { BENCH_ONLY: part }, true),
    bottom: (part) => benchQueueInChild('sqlite', { BENCH_ONLY: part }, true),
    alternate: true,
  });
}

type Figures = Record<string, number>;

interface Comparison {
  /** The figures compared, by the BENCH_ONLY part that measures them. */
  parts: Record<string, readonly string[]>;
  rounds: number;
  /** What the median ratios are printed as: `<ratioName>.<figure>_median`. */
  ratioName: string;
  /** The two sides, each one part in a fresh process: the ratios are top ÷ bottom. */
  top: (part: string) => Promise<Figures>;
  bottom: (part: string) => Promise<Figures>;
  /** Run the top side first in even rounds (so a machine getting busier or quieter favours neither side). */
  alternate?: boolean;
}

/** Each part, `rounds` times, both sides back to back; prints each round and the median ratios. Returns the top side's values by figure. */
export async function compareInRounds(c: Comparison): Promise<Map<string, number[]>> {
  const tops = new Map<string, number[]>();
  for (const [part, names] of Object.entries(c.parts)) {
    const ratios = new Map<string, number[]>(names.map((n) => [n, []]));
    for (const n of names) tops.set(n, []);
    for (let round = 1; round <= c.rounds; round++) {
      const topFirst = c.alternate === true && round % 2 === 0;
      const first = await (topFirst ? c.top : c.bottom)(part);
      const second = await (topFirst ? c.bottom : c.top)(part);
      const [top, bottom] = topFirst ? [first, second] : [second, first];
      const line = names.map((n) => {
        const r = top[n] / bottom[n];
        ratios.get(n)?.push(r);
        tops.get(n)?.push(top[n]);
        return `${n} ${top[n].toFixed(2)} ÷ ${bottom[n].toFixed(2)} = ${r.toFixed(3)}`;
      });
      console.log(`round ${round} ${part}: ${line.join('; ')}`);
    }
    for (const [n, rs] of ratios) console.log(`${c.ratioName}.${n}_median = ${median(rs).toFixed(3)}   (${rs.map((r) => r.toFixed(3)).join(', ')})`);
  }
  return tops;
}
