/**
 * A throw-away redis-server on a free port, for tests that must stop and restart Redis under a running gateway
 * (the shared Redis on 6379 serves every other test and is never stopped).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, waitFor } from './ports.js';
import { Redis } from 'ioredis';

export interface TestRedis {
  port: number;
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface TestRedisOptions {
  /** Extra redis-server arguments; they win over the defaults (no persistence), e.g. `--appendonly yes --dir …`. */
  args?: string[];
}

export async function startTestRedis(opts: TestRedisOptions = {}): Promise<TestRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;

  const start = async (): Promise<void> => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(opts.args ?? [])], {
      stdio: 'ignore',
    });
    await waitFor(
      async () => {
        const c = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
        c.on('error', () => {});
        try {
          await c.connect();
          return (await c.ping()) === 'PONG';
        } finally {
          c.disconnect();
        }
      },
      { what: `redis-server on ${port}` },
    );
  };

  const stop = async (): Promise<void> => {
    const p = proc;
    proc = null;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    });
  };

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, stop };
}
