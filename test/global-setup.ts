/**
 * The suite's global setup (vitest.config.ts): a run leaves no temp directory and no Redis key behind, or it fails.
 *
 * Before the tests, the run gets a temp directory of its own (TMPDIR, inherited by every test process and every
 * gateway, Redis or browser they start) and an id that every test's Redis prefix carries (helpers/test-run.ts).
 * After them, any `herald-*` entry still in that directory and any key still under the run's prefix is a test
 * that did not clean up: the teardown names them and throws, which makes `vitest run` (and `npm test`) exit 1.
 * Either way it then removes them, so /tmp and the shared Redis end as they began.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { runPrefix, TEST_RUN_ENV } from './helpers/test-run.js';

/** The shared Redis of the tests (helpers/redis.ts, which imports vitest's hooks and so is not for a global setup). */
const TEST_REDIS_URL = 'redis://127.0.0.1:6379';
/** How many leftovers the failure lists by name. */
const LISTED = 10;

export default function setup(): () => Promise<void> {
  const outerTmp = process.env.TMPDIR;
  const runDir = mkdtempSync(join(tmpdir(), 'herald-test-run-'));
  // mkdtemp makes it 0700; the code sandbox's tests run code as other (non-root) uids whose work dirs live in here,
  // and bubblewrap must reach them: others may pass through (as through /tmp), not list.
  chmodSync(runDir, 0o711);
  const run = randomBytes(4).toString('hex');
  process.env.TMPDIR = runDir;
  process.env[TEST_RUN_ENV] = run;
  return async () => {
    if (outerTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outerTmp;
    const dirs = readdirSync(runDir).filter((name) => name.startsWith('herald-'));
    rmSync(runDir, { recursive: true, force: true });
    const keys = await removeKeys(`${runPrefix(run)}*`);
    const problems = [leftovers('temp entries', dirs), leftovers('Redis keys', keys)].filter((p) => p !== null);
    if (problems.length > 0) throw new Error(`the tests left behind (now removed; a test must clean up what it makes):\n${problems.join('\n')}`);
  };
}

function leftovers(what: string, names: string[]): string | null {
  if (names.length === 0) return null;
  const more = names.length > LISTED ? `, and ${names.length - LISTED} more` : '';
  return `  ${names.length} ${what}: ${names.slice(0, LISTED).sort().join(', ')}${more}`;
}

/** Deletes the keys matching `pattern`; resolves with their names. */
async function removeKeys(pattern: string): Promise<string[]> {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: true });
  try {
    await redis.connect();
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
      found.push(...keys);
    } while (cursor !== '0');
    return found;
  } finally {
    redis.disconnect();
  }
}
