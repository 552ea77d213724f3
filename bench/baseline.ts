/**
 * BENCH_BASELINE=<git ref> with `npm run bench`: this code against an older commit's, in one run on one machine.
 * The ref is checked out in a temporary git worktree, installed (`npm ci`) and built; then, for BENCH_ROUNDS rounds
 * (default 1), the throughput part and the 5,000-turn part run on SQLite for both, each in a fresh process, the two
 * in turn (the older first in odd rounds, this one first in even rounds, so a machine getting busier or quieter
 * during the run does not favour one side). Each side runs its own `bench/queue.ts`, so the older commit is measured
 * by its own harness, with its own module layout. Printed: each round's figures, and the medians of after ÷ before.
 * The worktree is removed afterwards, failure or not.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { figuresFromChild } from './child.js';
import { BENCH_NODE_ARGS } from './gateway.js';
import { benchQueueInChild } from './queue.js';
import { compareInRounds } from './rounds.js';

const ROOT = join(import.meta.dirname, '..');
/** What is compared, by part (both harnesses print these names: messages/s and the 5,000 turns' finish time first). */
const PARTS = {
  throughput: ['messages_per_s', 'cpu_ms_per_message'],
  concurrent: ['concurrent_finish_s', 'concurrent_cpu_ms_per_turn', 'concurrent_peak_rss_mb'],
} as const;

interface Baseline {
  dir: string;
  commit: string;
  remove(): void;
}

/** `ref` checked out in a temporary worktree, installed and built; quiet unless a step fails. */
function prepareBaseline(ref: string): Baseline {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'herald-baseline-'));
  const remove = (): void => {
    try {
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
    } catch {
      // Not registered (the add failed): the folder alone goes.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
    console.log(`(baseline ${ref} = ${commit.slice(0, 10)} in ${dir}: npm ci, npm run build)`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, commit, remove };
}

/** One part of the older commit's own queue benchmark on SQLite, in a fresh process in its worktree. */
function baselineFigures(base: Baseline, part: string): Promise<Record<string, number>> {
  return figuresFromChild(join(base.dir, 'bench', 'queue.ts'), {
    execArgv: [...BENCH_NODE_ARGS, '--expose-gc'],
    env: { ...process.env, BENCH_ONLY: part, BENCH_STORE: 'sqlite' },
    cwd: base.dir,
    what: `the baseline's ${part} benchmark`,
    quiet: true,
  });
}

export async function runBaselineComparison(ref: string, rounds: number): Promise<void> {
  const base = prepareBaseline(ref);
  try {
    await compareInRounds({
      parts: PARTS,
      rounds,
      ratioName: 'after_to_before',
      top: (part) => benchQueueInChild('sqlite', { BENCH_ONLY: part }, true),
      bottom: (part) => baselineFigures(base, part),
      alternate: true,
    });
  } finally {
    base.remove();
  }
}
