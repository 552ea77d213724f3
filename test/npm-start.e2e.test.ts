/**
 * `npm start` is the gateway. The build is a step of its own (prestart) and the start script execs node, so the
 * gateway is npm's own child and a SIGTERM to `npm start` reaches it: it stops gracefully and frees its port. (The
 * script used to be `npm run build && node …`, whose shell took the signal and left the gateway holding the port.)
 * Run after `npm run build`, as `npm test` does, so prestart finds the build up to date.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from './helpers/gateway.js';
import { freePort, waitFor } from './helpers/ports.js';
import { deleteRedisPrefix } from './helpers/redis-keys.js';
import { testPrefix } from './helpers/test-run.js';

const ROOT = resolve(import.meta.dirname, '..');

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      res(true);
    });
    socket.once('error', () => res(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The parent of a process, from /proc (Linux, where the suite runs). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('npm start', () => {
  it("runs the gateway as npm's own child; SIGTERM to npm stops it and frees the port", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'herald-npm-start-'));
    const prefix = testPrefix('npm-start');
    const env = isolatedEnv({
      // The npm and node of this test run, whatever the machine's own are.
      PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
      HERALD_REDIS_PREFIX: prefix,
      HERALD_PORT: String(port),
      HERALD_DB: join(dir, 'herald.db'),
    });
    const npm = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: 'ignore' });
    const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
    let gateway: number | undefined;
    try {
      gateway = await waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/health/detailed`);
          const body = (await res.json()) as { workers: Array<{ pid: number }> };
          return body.workers[0]?.pid;
        },
        { timeoutMs: 90_000, what: 'npm start to serve /health/detailed with its heartbeat' },
      );
      expect(parentOf(gateway)).toBe(npm.pid);

      npm.kill('SIGTERM');
      expect(await exited).toBe(0);
      await waitFor(async () => !(await listening(port)), { timeoutMs: 15_000, what: 'the port to be free' });
      await waitFor(() => !alive(gateway as number), { timeoutMs: 15_000, what: 'the gateway process to end' });
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      if (gateway !== undefined && alive(gateway)) process.kill(gateway, 'SIGKILL');
      await deleteRedisPrefix(prefix);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
