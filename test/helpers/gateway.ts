/**
 * Starts the real gateway process (`node --import tsx apps/gateway/src/main.ts`) with the given environment,
 * the way `npm start` does, and waits until its admin server answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, waitFor } from './ports.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ENTRY = join(ROOT, 'apps/gateway/src/main.ts');

export interface GatewayProcess {
  proc: ChildProcess;
  url: string;
  port: number;
  dbPath: string;
  /** Every stdout + stderr line so far. */
  output: string[];
  /** Parsed JSON log lines. */
  logs(): Array<Record<string, unknown>>;
  /** SIGTERM, then wait for exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

export interface StartOptions {
  env?: Record<string, string>;
  args?: string[];
  /** Wait for /health (default true). */
  waitReady?: boolean;
  dataDir?: string;
}

/** Environment that keeps a test gateway away from the real world: no inherited tokens, a unique Redis prefix. */
export function isolatedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const keep = ['PATH', 'HOME', 'NODE_OPTIONS', 'TMPDIR', 'LANG'];
  const env: Record<string, string> = {};
  for (const k of keep) if (process.env[k]) env[k] = process.env[k] as string;
  return { ...env, HERALD_LOG_LEVEL: 'info', HERALD_REDIS_PREFIX: `herald-test-${process.pid}-${Date.now().toString(36)}`, ...extra };
}

export async function startGateway(opts: StartOptions = {}): Promise<GatewayProcess> {
  const port = opts.env?.HERALD_PORT ? Number(opts.env.HERALD_PORT) : await freePort();
  const dir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'herald-gw-'));
  const dbPath = opts.env?.HERALD_DB ?? join(dir, 'herald.db');
  const env = isolatedEnv({ HERALD_PORT: String(port), HERALD_DB: dbPath, ...opts.env });
  const proc = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...(opts.args ?? [])], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const collect = (buf: Buffer): void => {
    for (const line of buf.toString('utf8').split('\n')) if (line.trim()) output.push(line);
  };
  proc.stdout?.on('data', collect);
  proc.stderr?.on('data', collect);
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));

  const gw: GatewayProcess = {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    dbPath,
    output,
    exited,
    logs: () =>
      output.flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const code = await exited;
      if (!opts.dataDir && !opts.env?.HERALD_DB) rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };

  if (opts.waitReady !== false) {
    const healthy = waitFor(async () => (await fetch(`${gw.url}/health`)).ok, { timeoutMs: 30_000, what: 'gateway /health' });
    const died = exited.then((code) => {
      throw new Error(`gateway exited early with code ${code}:\n${output.join('\n')}`);
    });
    try {
      await Promise.race([healthy, died]);
    } catch (err) {
      proc.kill('SIGKILL');
      throw err;
    } finally {
      died.catch(() => {});
    }
  }
  return gw;
}
