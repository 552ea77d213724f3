/**
 * The sandbox tests' rig: a real bubblewrap backend, or the backend a worker would get (gatewayBackend: the same
 * start-up detection, trial run included), a sandbox root in a temp dir of the test's own (removed after the file),
 * small limits, and a look at the host's process table to prove nothing of a run outlives it.
 */
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createLogger } from '../../support/logger.js';
import { BubblewrapBackend, findBwrapTools } from './bubblewrap.js';
import type { SandboxConfig } from './config.js';
import type { SandboxDetection } from './detect.js';
import { openSandbox } from './wiring.js';
import { sessionWorkDir } from './work-dir.js';
import type { InputFile, RunResult, SandboxBackend, SandboxBackendName, SandboxLanguage, SandboxLimits } from './types.js';

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

/** The settings a worker would read, with TEST_LIMITS and the test's sandbox root. */
export function testSandboxConfig(backend: SandboxBackendName, dir: string): SandboxConfig {
  return {
    sandboxBackend: backend,
    sandboxDir: dir,
    sandboxImage: process.env.HERALD_SANDBOX_IMAGE ?? 'python:3.12-slim',
    sandboxTimeoutS: TEST_LIMITS.wallMs / 1000,
    sandboxCpuS: TEST_LIMITS.cpuSeconds,
    sandboxMemoryMb: TEST_LIMITS.memoryBytes / MB,
    sandboxProcesses: TEST_LIMITS.processes,
    sandboxDiskMb: TEST_LIMITS.diskBytes / MB,
    sandboxOutputKb: TEST_LIMITS.outputBytes / 1024,
    sandboxNetwork: TEST_LIMITS.network,
  };
}

/**
 * The backend a worker gets at start-up (wiring.ts openSandbox: detection by trial run), found before the file's
 * tests. `backend()` throws if there is none; `detection` says why (a test of an optional backend skips on it).
 */
export function gatewayBackend(name: SandboxBackendName, root: { path: string }): SandboxBackend & { detection: () => SandboxDetection | null } {
  let found: SandboxDetection | null = null;
  beforeAll(async () => {
    found = await openSandbox(testSandboxConfig(name, root.path), [['code']], createLogger({ level: 'silent' }));
  }, 120_000);
  return {
    name,
    detection: () => found,
    run: (req) => {
      const backend = found?.backend;
      if (!backend) throw new Error(`no ${name} backend: ${found?.reason ?? 'not detected yet'}`);
      return backend.run(req);
    },
  };
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
