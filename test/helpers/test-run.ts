/**
 * Naming what a test run makes, so the run can prove it left nothing behind. The suite's global setup
 * (test/global-setup.ts) gives each `vitest run` an id in HERALD_TEST_RUN and a temp directory of its own in TMPDIR,
 * which every test process and every process a test starts inherit (os.tmpdir() points into it). Every Redis key
 * prefix a test makes up comes from testPrefix, which carries that id: on the Redis other runs share at the same
 * time, the setup finds this run's leftovers, and only those.
 */
export const TEST_RUN_ENV = 'HERALD_TEST_RUN';

/** The prefix every key of one run starts with (`htest-solo-` when the global setup did not run). */
export function runPrefix(run = process.env[TEST_RUN_ENV] ?? 'solo'): string {
  return `htest-${run}-`;
}

/** A fresh Redis key prefix for one test (or one gateway of a test): unique, and marked with the run's id. */
export function testPrefix(label: string): string {
  return `${runPrefix()}${label}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}
