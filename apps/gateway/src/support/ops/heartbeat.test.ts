/**
 * Worker heartbeats against the real Redis: a beating worker is listed with its running turns, a stopped one is
 * gone at once, a dead one (no more beats) drops out when its key expires; readiness follows.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../../../test/helpers/ports.js';
import { useTestRedis } from '../../../../../test/helpers/redis.js';
import type { McpServerStatus } from '../../features/mcp/connection.js';
import { listWorkers, WorkerHeartbeat, workersSeenCheck } from './heartbeat.js';

const { redis, prefix } = useTestRedis('heartbeat');

describe('worker heartbeats', () => {
  it('lists beating workers with their running turns; a clean stop removes one at once', async () => {
    let running = 2;
    const files: McpServerStatus = {
      name: 'files',
      transport: 'stdio',
      state: 'ready',
      tools: 3,
      error: null,
      since: 1,
      failures: 0,
      crashes: 1,
      restarts: 1,
      lastError: 'the connection closed',
      lastErrorAt: 1,
      nextAttemptAt: null,
    };
    const bwrap = { backend: 'bubblewrap' as const, unavailable: ['docker: no daemon (connect ENOENT /var/run/docker.sock)'] };
    const a = new WorkerHeartbeat({
      redis,
      prefix,
      workerId: 'w-a',
      runningTurns: () => running,
      mcpServers: () => [files],
      sandbox: () => bwrap,
      intervalMs: 50,
    });
    const b = new WorkerHeartbeat({ redis, prefix, workerId: 'w-b', runningTurns: () => 0, mcpServers: () => [], sandbox: () => null, intervalMs: 50 });
    await Promise.all([a.start(), b.start()]);
    const check = workersSeenCheck({ redis, prefix, localWorker: false });
    await expect(check.check()).resolves.toBeUndefined();
    expect((await listWorkers(redis, prefix)).map((w) => [w.id, w.runningTurns, w.pid])).toEqual([
      ['w-a', 2, process.pid],
      ['w-b', 0, process.pid],
    ]);
    // Each worker's own MCP servers, for /health/detailed on any process.
    expect((await listWorkers(redis, prefix)).map((w) => w.mcpServers)).toEqual([[files], []]);
    // And its sandbox backend (execute_code), or null where no profile offers code.
    expect((await listWorkers(redis, prefix)).map((w) => w.sandbox)).toEqual([bwrap, null]);
    running = 5;
    // The next beat carries the new count.
    await waitFor(async () => (await listWorkers(redis, prefix))[0].runningTurns === 5, { what: 'a beat with 5 running turns' });
    await a.stop();
    await b.stop();
    expect(await listWorkers(redis, prefix)).toEqual([]);
    await expect(check.check()).rejects.toThrow('no worker seen in the last 30 s');
  });

  it('a worker that stops beating without saying so drops out when its heartbeat expires', async () => {
    const dead = new WorkerHeartbeat({
      redis,
      prefix,
      workerId: 'w-dead',
      runningTurns: () => 1,
      mcpServers: () => [],
      sandbox: () => null,
      intervalMs: 60_000,
      ttlMs: 200,
    });
    await dead.start();
    expect((await listWorkers(redis, prefix)).map((w) => w.id)).toEqual(['w-dead']);
    // Its key expires in Redis 200 ms later (it beats again only after a minute).
    await waitFor(async () => (await listWorkers(redis, prefix)).length === 0, { what: 'the dead worker to drop out' });
    // Pruned from the index too, so the set does not grow with every restart.
    expect(await redis.smembers(`${prefix}:workers`)).toEqual([]);
    await dead.stop();
  });

  it('a process that runs turns itself is ready without asking Redis', async () => {
    await expect(workersSeenCheck({ redis, prefix, localWorker: true }).check()).resolves.toBeUndefined();
  });
});
