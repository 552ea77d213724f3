/**
 * A Redis primary, one replica and three Sentinels, real redis-server processes on free ports in a temp dir (a
 * Sentinel is `redis-server <conf> --sentinel`, the same binary Debian's redis-sentinel links to). For tests and
 * the failover bench that kill the primary under a running gateway. `close()` kills all of them and removes the dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, waitFor } from './ports.js';

const SENTINEL_NAME = 'herald-test';
/** How long the Sentinels wait before calling the primary down (the failover gap's floor). */
const DOWN_AFTER_MS = 1000;

export interface SentinelSet {
  /** Gateway settings that reach this set through its Sentinels. */
  env: Record<string, string>;
  /** Port of the server the Sentinels name as primary now. */
  primaryPort(): Promise<number>;
  /** SIGKILLs the current primary; resolves with its port once it has exited. */
  killPrimary(): Promise<number>;
  /** Waits until the Sentinels name a primary other than `oldPort`; resolves with its port. */
  failedOver(oldPort: number, timeoutMs?: number): Promise<number>;
  /** Starts a server again on a killed port (empty; the Sentinels turn it into a replica of the new primary). */
  restart(port: number): Promise<void>;
  /** Waits until the current primary has `n` replicas in sync (connected, link up). */
  replicasOnline(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const SERVER_ARGS = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

export async function startSentinelSet(): Promise<SentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-sentinel-'));
  // By port, for killing the primary; every process ever started is in `spawned` too, so close() kills them all.
  const procs = new Map<number, ChildProcess>();
  const spawned: ChildProcess[] = [];
  const start = (port: number, args: string[]): void => {
    const proc = spawn('redis-server', args, { stdio: 'ignore', cwd: dir });
    spawned.push(proc);
    procs.set(port, proc);
  };
  const sentinelPorts: number[] = [];
  try {
    // Five distinct ports: a port is free until its server binds it, so freePort can give one twice meanwhile (two
    // Sentinels on one port: one of them fails to start, and the set never sees three).
    const [primary, replica, ...sentinels] = await distinctFreePorts(5);
    start(primary, ['--port', String(primary), '--dir', dir, '--dbfilename', `${primary}.rdb`, ...SERVER_ARGS]);
    start(replica, ['--port', String(replica), '--dir', dir, '--dbfilename', `${replica}.rdb`, '--replicaof', '127.0.0.1', String(primary), ...SERVER_ARGS]);
    await Promise.all([primary, replica].map((p) => answers(p)));
    for (const port of sentinels) {
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${SENTINEL_NAME} 10000`,
          `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
          '',
        ].join('\n'),
      );
      start(port, [conf, '--sentinel']);
      sentinelPorts.push(port);
    }
    await Promise.all(sentinelPorts.map((p) => answers(p)));
    // Every Sentinel knows the replica and the two others: a failover can then be agreed on.
    await waitFor(
      async () => {
        for (const port of sentinelPorts) {
          const m = await sentinelMaster(port);
          if (m.get('num-slaves') !== '1' || m.get('num-other-sentinels') !== '2') return false;
        }
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the Sentinels to discover the replica and each other' },
    );
  } catch (err) {
    await killAll(spawned);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const primaryPort = async (): Promise<number> => {
    const addr = (await ask(sentinelPorts[0], ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME])) as [string, string];
    return Number(addr[1]);
  };

  return {
    env: {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_SENTINELS: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
      REDIS_SENTINEL_NAME: SENTINEL_NAME,
    },
    primaryPort,
    killPrimary: async () => {
      const port = await primaryPort();
      const proc = procs.get(port);
      if (!proc || proc.exitCode !== null) throw new Error(`no running server on the primary's port ${port}`);
      await new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGKILL');
      });
      return port;
    },
    failedOver: async (oldPort, timeoutMs = 60_000) =>
      waitFor(
        async () => {
          // Every Sentinel names the new primary (a client may ask any of them).
          const ports = await Promise.all(
            sentinelPorts.map(async (p) => Number(((await ask(p, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME])) as string[])[1])),
          );
          return ports.every((p) => p === ports[0] && p !== oldPort) ? ports[0] : 0;
        },
        { timeoutMs, intervalMs: 50, what: 'the Sentinels to promote the replica' },
      ),
    restart: async (port) => {
      start(port, ['--port', String(port), '--dir', dir, '--dbfilename', `${port}.rdb`, ...SERVER_ARGS]);
      await answers(port);
    },
    replicasOnline: async (n, timeoutMs = 60_000) => {
      await waitFor(
        async () => {
          const info = (await ask(await primaryPort(), ['INFO', 'replication'])) as string;
          return (info.match(/^slave\d+:.*state=online/gm) ?? []).length >= n;
        },
        { timeoutMs, intervalMs: 100, what: `${n} replica(s) in sync with the primary` },
      );
    },
    close: async () => {
      await killAll(spawned);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function ask(port: number, command: string[]): Promise<unknown> {
  const c = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  c.on('error', () => {});
  try {
    await c.connect();
    return await c.call(command[0], ...command.slice(1));
  } finally {
    c.disconnect();
  }
}

async function sentinelMaster(port: number): Promise<Map<string, string>> {
  const flat = (await ask(port, ['SENTINEL', 'MASTER', SENTINEL_NAME])) as string[];
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i], flat[i + 1]);
  return out;
}

async function answers(port: number): Promise<void> {
  await waitFor(async () => (await ask(port, ['PING'])) === 'PONG', { intervalMs: 50, what: `redis-server on ${port}` });
}

/** `n` ports that were free a moment ago, no two the same. */
async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

async function killAll(procs: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve();
          p.once('exit', () => resolve());
          p.kill('SIGKILL');
        }),
    ),
  );
}
