// `npm run build` (and `prestart`): compiles every workspace to its dist/ with `tsc -b tsconfig.build.json`, one
// build at a time per checkout. tsc writes each file in place, so a second build running beside the first (three
// `npm start`s on an unbuilt checkout) rewrote files another start was loading; here the later builds wait for the
// first, then find everything up to date and write nothing.
//
// The lock is a file made with O_EXCL holding the builder's pid; a lock whose process is gone (a build killed with
// Ctrl-C) is taken over.
import '../apps/gateway/bin/check-node.js';
import { spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = join(import.meta.dirname, '..');
const LOCK = join(ROOT, 'node_modules', '.cache', 'herald-build.lock');
const POLL_MS = 200;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Takes the lock, or says who holds it: a live builder's pid, or null when the lock was stale and is gone now. */
function tryLock() {
  try {
    const fd = openSync(LOCK, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return { taken: true };
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
  let holder;
  try {
    holder = Number(readFileSync(LOCK, 'utf8'));
  } catch (err) {
    if (err.code === 'ENOENT') return { taken: false, holder: null };
    throw err;
  }
  // An empty file is a lock being written this instant: wait for it like for a live one.
  if (!holder) return { taken: false, holder: 0 };
  if (alive(holder)) return { taken: false, holder };
  rmSync(LOCK, { force: true });
  return { taken: false, holder: null };
}

async function lock() {
  mkdirSync(dirname(LOCK), { recursive: true });
  let told = false;
  for (;;) {
    const got = tryLock();
    if (got.taken) return;
    if (got.holder && !told) {
      process.stderr.write(`build: waiting for the build running in process ${got.holder}\n`);
      told = true;
    }
    if (got.holder !== null) await sleep(POLL_MS);
  }
}

await lock();
let status = 1;
try {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  status = run.status ?? 1;
} finally {
  rmSync(LOCK, { force: true });
}
process.exitCode = status;
