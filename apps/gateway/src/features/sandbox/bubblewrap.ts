/**
 * The bubblewrap backend (the default on Linux): each run is bwrap under setpriv and prlimit (bubblewrap-args.ts
 * says why each flag), started with the sandbox's own minimal environment, watched by spawn-run.ts. Needs the
 * gateway to run as root, to give each run an unprivileged uid of its own (see docs/sandbox.md).
 */
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { bwrapArgv, type BwrapTools } from './bubblewrap-args.js';
import { SANDBOX_ENV } from './languages.js';
import { runInWorkDir } from './session-run.js';
import { spawnRun } from './spawn-run.js';
import type { RunRequest, RunResult, SandboxBackend } from './types.js';

/**
 * Each run's host uid is drawn from here: far above any real user, subuid range or systemd dynamic user, and one of
 * its own per run, so RLIMIT_NPROC (counted per uid) binds each run alone.
 */
const SANDBOX_UID_BASE = 2_100_000_000;
const SANDBOX_UID_SPAN = 1 << 24;
/** Tar's headers and padding on top of the work dir's bytes. */
const TAR_SLACK_BYTES = 4 * 1024 * 1024;
const SEARCH_PATH = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

function which(name: string): string | null {
  for (const dir of SEARCH_PATH) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}

/** The three programs the recipe needs, or why they cannot be used. */
export function findBwrapTools(): BwrapTools | string {
  if (process.platform !== 'linux') return `bubblewrap: runs on Linux only (this is ${process.platform})`;
  const bwrap = which('bwrap');
  if (!bwrap) return 'bubblewrap: bwrap not found (Debian/Ubuntu: apt-get install bubblewrap)';
  const setpriv = which('setpriv');
  const prlimit = which('prlimit');
  if (!setpriv || !prlimit) return 'bubblewrap: setpriv or prlimit not found (Debian/Ubuntu: apt-get install util-linux)';
  if (process.getuid?.() !== 0) {
    return `bubblewrap: the gateway runs as uid ${process.getuid?.()}, not root, so it cannot give the code an unprivileged uid of its own (process limits would count the gateway's own processes); run it as root or use HERALD_SANDBOX_BACKEND=docker`;
  }
  return { bwrap, setpriv, prlimit };
}

export class BubblewrapBackend implements SandboxBackend {
  readonly name = 'bubblewrap' as const;

  constructor(private readonly tools: BwrapTools) {}

  run(req: RunRequest): Promise<RunResult> {
    return runInWorkDir(req, true, (dirs) =>
      spawnRun({
        argv: bwrapArgv(this.tools, SANDBOX_UID_BASE + randomInt(SANDBOX_UID_SPAN), dirs, req.language, req.limits),
        env: SANDBOX_ENV,
        limits: req.limits,
        signal: req.signal,
        filesCap: req.limits.diskBytes + TAR_SLACK_BYTES,
      }),
    );
  }
}
