/**
 * Which backend this host can use, found by trying: each candidate runs a trivial program through the whole
 * recipe (not just "is the binary there"), and each one that cannot says why in one line. `auto` prefers
 * bubblewrap and falls back to Docker; when none works, execute_code is not offered and start-up logs the reasons.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Docker from 'dockerode';
import { BubblewrapBackend, findBwrapTools } from './bubblewrap.js';
import { DockerBackend } from './docker.js';
import { ensureSandboxRoot } from './work-dir.js';
import type { BackendProbe, SandboxBackend, SandboxBackendName, SandboxLimits } from './types.js';

type SandboxChoice = 'auto' | SandboxBackendName | 'off';

export interface SandboxSettings {
  backend: SandboxChoice;
  /** Root of the per-session work dirs (HERALD_SANDBOX_DIR). */
  dir: string;
  /** Image of the Docker backend. */
  image: string;
  limits: SandboxLimits;
}

export interface SandboxDetection {
  backend: SandboxBackend | null;
  /** What was tried, in order, with why each failed. */
  probes: BackendProbe[];
  /** Why there is no backend (null when there is one). */
  reason: string | null;
}

const PING_TIMEOUT_MS = 3_000;
const TRIAL_WALL_MS = 30_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `echo ok` through the backend; null when it answered, else what went wrong. */
async function trialRun(backend: SandboxBackend, settings: SandboxSettings): Promise<string | null> {
  const workDir = join(settings.dir, `.probe-${randomBytes(6).toString('hex')}`);
  try {
    // A sandbox dir that cannot be made is a reason like any other (the tool is then not offered), not a failed start.
    await ensureSandboxRoot(settings.dir);
    const limits = { ...settings.limits, wallMs: Math.max(settings.limits.wallMs, TRIAL_WALL_MS), network: false };
    const r = await backend.run({ language: 'shell', code: 'echo ok', workDir, inputFiles: [], limits, signal: new AbortController().signal });
    if (r.exitCode === 0 && r.stdout.trim() === 'ok') return null;
    const said = (r.stderr.trim().split('\n')[0] ?? '') || (r.timedOut ? 'timed out' : `exit code ${r.exitCode ?? r.signal}`);
    return `a trial run failed: ${said}`;
  } catch (err) {
    return `a trial run failed: ${message(err)}`;
  } finally {
    await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function probeBubblewrap(settings: SandboxSettings): Promise<{ probe: BackendProbe; backend: SandboxBackend | null }> {
  const tools = findBwrapTools();
  if (typeof tools === 'string') return { probe: { name: 'bubblewrap', ok: false, reason: tools }, backend: null };
  const backend = new BubblewrapBackend(tools);
  const failed = await trialRun(backend, settings);
  return failed === null
    ? { probe: { name: 'bubblewrap', ok: true, reason: null }, backend }
    : { probe: { name: 'bubblewrap', ok: false, reason: `bubblewrap: ${failed}` }, backend: null };
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function probeDocker(settings: SandboxSettings, docker: Docker): Promise<{ probe: BackendProbe; backend: SandboxBackend | null }> {
  const fail = (reason: string) => ({ probe: { name: 'docker' as const, ok: false, reason: `docker: ${reason}` }, backend: null });
  try {
    await withTimeout(docker.ping(), PING_TIMEOUT_MS, 'the daemon');
  } catch (err) {
    return fail(`no daemon (${message(err)})`);
  }
  try {
    await docker.getImage(settings.image).inspect();
  } catch {
    return fail(`image ${settings.image} is not on this host (docker pull ${settings.image}, or set HERALD_SANDBOX_IMAGE)`);
  }
  const backend = new DockerBackend(docker, settings.image);
  const failed = await trialRun(backend, settings);
  return failed === null ? { probe: { name: 'docker', ok: true, reason: null }, backend } : fail(failed);
}

export async function detectSandbox(settings: SandboxSettings, docker: Docker = new Docker()): Promise<SandboxDetection> {
  if (settings.backend === 'off') return { backend: null, probes: [], reason: 'HERALD_SANDBOX_BACKEND=off' };
  const order: SandboxBackendName[] = settings.backend === 'auto' ? ['bubblewrap', 'docker'] : [settings.backend];
  const probes: BackendProbe[] = [];
  let chosen: SandboxBackend | null = null;
  for (const name of order) {
    const { probe, backend } = name === 'bubblewrap' ? await probeBubblewrap(settings) : await probeDocker(settings, docker);
    probes.push(probe);
    chosen ??= backend;
  }
  const reason = chosen ? null : probes.map((p) => p.reason).join('; ');
  return { backend: chosen, probes, reason };
}

/** The start-up line: the backend in use and why the others are not, or why execute_code is not offered. */
export function describeDetection(d: SandboxDetection): string {
  const others = d.probes.filter((p) => !p.ok && p.reason).map((p) => p.reason);
  if (d.backend) return `execute_code runs code in ${d.backend.name}${others.length ? ` (${others.join('; ')})` : ''}`;
  return `execute_code not offered: ${d.reason}`;
}

/** What /health/detailed shows under `sandbox`: the backend in use (null: none) and why the others are not. */
export interface SandboxHealth {
  backend: SandboxBackendName | null;
  unavailable: string[];
}

export function sandboxHealth(d: SandboxDetection): SandboxHealth {
  return { backend: d.backend?.name ?? null, unavailable: d.probes.filter((p) => !p.ok && p.reason).map((p) => p.reason as string) };
}
