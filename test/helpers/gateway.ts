/**
 * Starts the real gateway process with the given environment and waits until its admin server answers: from the
 * TypeScript sources (`node --import tsx apps/gateway/src/main.ts`, so a test never runs a stale build), or, with
 * `compiled: true`, the compiled build the way the Docker image runs it (`node --expose-gc --conditions=@herald/dist
 * apps/gateway/dist/main.js`, after `npm run build`; `npm start` itself: npm-start.e2e.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort, waitFor } from './ports.js';
import { deleteRedisPrefix } from './redis-keys.js';
import { testPrefix } from './test-run.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ENTRY = join(ROOT, 'apps/gateway/src/main.ts');
const COMPILED_ENTRY = join(ROOT, 'apps/gateway/dist/main.js');
// By absolute URL, so a gateway started in another working directory still finds the loader.
const TSX = import.meta.resolve('tsx');

export interface GatewayProcess {
  proc: ChildProcess;
  url: string;
  port: number;
  dbPath: string;
  /** Every stdout + stderr line so far, whole lines only (a line split across pipe reads is joined first). */
  output: string[];
  /** Parsed JSON log lines. */
  logs(): Array<Record<string, unknown>>;
  /** Resolves with the first JSON log line (already written or still to come) that matches; rejects on exit. */
  waitForLog(match: (line: Record<string, unknown>) => boolean, what?: string): Promise<Record<string, unknown>>;
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
  /** Run the compiled build (dist/) instead of the sources. */
  compiled?: boolean;
  /** Working directory of the process (default: the repository root). */
  cwd?: string;
}

/** Environment that keeps a test gateway away from the real world: no inherited tokens, a unique Redis prefix. */
export function isolatedEnv(extra: Record<string, string> = {}): Record<string, string> {
  const keep = ['PATH', 'HOME', 'NODE_OPTIONS', 'TMPDIR', 'LANG'];
  const env: Record<string, string> = {};
  for (const k of keep) if (process.env[k]) env[k] = process.env[k] as string;
  // The tests written before streaming and tool progress were on by default test the plain path: one message per
  // reply. They keep it explicitly here; a test of the defaults passes '' (unset) for these.
  const plainReplies = { HERALD_STREAMING: 'false', TELEGRAM_TOOL_PROGRESS: 'off', SLACK_TOOL_PROGRESS: 'off' };
  return { ...env, HERALD_LOG_LEVEL: 'info', HERALD_REDIS_PREFIX: testPrefix('gw'), ...plainReplies, ...extra };
}

/** Tries to take a port that another process grabbed between freePort() and the gateway's listen(). */
const PORT_ATTEMPTS = 4;

export async function startGateway(opts: StartOptions = {}): Promise<GatewayProcess> {
  // A free port may be taken by someone else before the gateway listens on it (other test processes run beside
  // this one): when the port was ours to choose, a start that failed with EADDRINUSE is tried on another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      const portTaken = err instanceof Error && err.message.includes('EADDRINUSE');
      if (!portTaken || opts.env?.HERALD_PORT || attempt >= PORT_ATTEMPTS) throw err;
    }
  }
}

async function startOnce(opts: StartOptions): Promise<GatewayProcess> {
  const port = opts.env?.HERALD_PORT ? Number(opts.env.HERALD_PORT) : await freePort();
  // What this helper made up it also cleans up: the temp directory (made only when the test names neither a data
  // directory nor a HERALD_DB), and the Redis prefix on the shared Redis (a test that chose its prefix, or a Redis
  // of its own, cleans those itself).
  const ownDir = opts.dataDir || opts.env?.HERALD_DB ? null : mkdtempSync(join(tmpdir(), 'herald-gw-'));
  const dbPath = opts.env?.HERALD_DB ?? join(opts.dataDir ?? ownDir ?? '', 'herald.db');
  const env = isolatedEnv({ HERALD_PORT: String(port), HERALD_DB: dbPath, ...opts.env });
  const ownKeys = !opts.env?.HERALD_REDIS_PREFIX && !opts.env?.REDIS_URL;
  const cleanUp = async (): Promise<void> => {
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
    if (ownKeys) await deleteRedisPrefix(env.HERALD_REDIS_PREFIX).catch(() => undefined);
  };
  const entryArgs = opts.compiled ? ['--expose-gc', '--conditions=@herald/dist', COMPILED_ENTRY] : ['--import', TSX, ENTRY];
  const proc = spawn(process.execPath, [...entryArgs, ...(opts.args ?? [])], {
    cwd: opts.cwd ?? ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const waiters = new Set<(line: string) => void>();
  for (const stream of [proc.stdout, proc.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (!line.trim()) return;
      output.push(line);
      for (const w of waiters) w(line);
    });
  }
  // 'close', not 'exit': it comes after stdout and stderr have ended, so `output` holds every line by then.
  const exited = new Promise<number | null>((res) => proc.once('close', (code) => res(code)));
  const parse = (line: string): Record<string, unknown> | null => {
    try {
      const v: unknown = JSON.parse(line);
      return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  };

  const gw: GatewayProcess = {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    dbPath,
    output,
    exited,
    logs: () =>
      output.flatMap((l) => {
        const parsed = parse(l);
        return parsed ? [parsed] : [];
      }),
    waitForLog: (match, what = 'a matching log line') =>
      new Promise((res, rej) => {
        const found = output.map(parse).find((l) => l !== null && match(l));
        if (found) return res(found);
        const waiter = (line: string): void => {
          const parsed = parse(line);
          if (parsed && match(parsed)) {
            waiters.delete(waiter);
            res(parsed);
          }
        };
        waiters.add(waiter);
        void exited.then((code) => {
          if (!waiters.delete(waiter)) return;
          rej(new Error(`gateway exited (code ${code}) before ${what}:\n${output.slice(-20).join('\n')}`));
        });
      }),
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const code = await exited;
      await cleanUp();
      return code;
    },
  };

  if (opts.waitReady !== false) {
    const healthy = waitFor(async () => (await fetch(`${gw.url}/health`)).ok, { timeoutMs: 90_000, what: 'gateway /health' });
    const died = exited.then((code) => {
      throw new Error(`gateway exited early with code ${code}:\n${output.join('\n')}`);
    });
    try {
      await Promise.race([healthy, died]);
    } catch (err) {
      proc.kill('SIGKILL');
      await exited;
      await cleanUp();
      throw err;
    } finally {
      died.catch(() => {});
    }
  }
  return gw;
}
