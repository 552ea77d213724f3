/**
 * The sandbox tests' rig: a real bubblewrap backend, a sandbox root in a temp dir of the test's own (removed after
 * the file), small limits, and a look at the host's process table to prove nothing of a run outlives it.
 */
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { BubblewrapBackend, findBwrapTools } from './bubblewrap.js';
import { sessionWorkDir } from './work-dir.js';
import type { InputFile, RunResult, SandboxBackend, SandboxLanguage, SandboxLimits } from './types.js';

export const MB = 1024 * 1024;

export const TEST_LIMITS: SandboxLimits = {
  wallMs: 20_000,
  cpuSeconds: 10,
  memoryBytes: 1024 * MB,
  processes: 32,
  diskBytes: 16 * MB,
  outputBytes: 64 * 1024,
  network: false,
};

export function bubblewrap(): SandboxBackend {
  const tools = findBwrapTools();
  if (typeof tools === 'string') throw new Error(`the sandbox tests need bubblewrap (.ci/run installs it): ${tools}`);
  return new BubblewrapBackend(tools);
}

/** A sandbox root for this test file: a temp dir (0711, as the sandbox's uid must pass through it), removed after. */
export function sandboxRoot(): { path: string } {
  const root = { path: '' };
  beforeAll(async () => {
    root.path = await mkdtemp(join(tmpdir(), 'herald-sandbox-test-'));
    await chmod(root.path, 0o711);
  });
  afterAll(async () => {
    await rm(root.path, { recursive: true, force: true });
  });
  return root;
}

export interface RunOptions {
  session?: string;
  limits?: Partial<SandboxLimits>;
  inputFiles?: InputFile[];
  signal?: AbortSignal;
}

export function runner(backend: SandboxBackend, root: { path: string }) {
  return (language: SandboxLanguage, code: string, opts: RunOptions = {}): Promise<RunResult> =>
    backend.run({
      language,
      code,
      workDir: sessionWorkDir(root.path, opts.session ?? 'session-a'),
      inputFiles: opts.inputFiles ?? [],
      limits: { ...TEST_LIMITS, ...opts.limits },
      signal: opts.signal ?? new AbortController().signal,
    });
}

/** Host processes (pid and command line) whose command line contains `marker`. */
export async function hostProcessesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

/**
 * Waits (polling the process table) until `count` host processes carry `marker`, and returns them; gives up with
 * what it saw once `run` has ended, so a run that never got that far fails the test at once instead of hanging it.
 */
export async function waitForHostProcesses(marker: string, count: number, run: Promise<unknown>): Promise<string[]> {
  let ended = false;
  void run.then(
    () => (ended = true),
    () => (ended = true),
  );
  for (;;) {
    const found = await hostProcessesWith(marker);
    if (found.length >= count || ended) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
