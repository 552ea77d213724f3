/**
 * Worker heartbeats in Redis, so an ingress (or any process) can tell which workers are alive across machines.
 *
 * Each worker process writes `<prefix>:worker:<id>` (JSON, expiring after WORKER_SEEN_WINDOW_MS) every few
 * seconds and keeps its id in the set `<prefix>:workers`. The key's expiry, not a timestamp comparison, decides
 * "alive", so clock skew between machines does not matter; readers drop ids whose key has expired.
 */
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { VERSION } from '../version.js';
import type { McpServerStatus } from '../../features/mcp/connection.js';
import type { SandboxHealth } from '../../features/sandbox/index.js';

const HEARTBEAT_INTERVAL_MS = 5_000;
/** A worker not heard from for this long is gone: readiness needs one seen within it. */
const WORKER_SEEN_WINDOW_MS = 30_000;

export interface WorkerBeat {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: number;
  /** The writer's clock: for display only. */
  lastHeartbeatAt: number;
  runningTurns: number;
  /** The worker's own MCP servers (each worker holds its own connections); absent from older workers' beats. */
  mcpServers?: McpServerStatus[];
  /** execute_code's backend on that worker (null: no profile offers code); absent from older workers' beats. */
  sandbox?: SandboxHealth | null;
}

const indexKey = (prefix: string): string => `${prefix}:workers`;
const beatKey = (prefix: string, id: string): string => `${prefix}:worker:${id}`;

export interface HeartbeatOptions {
  redis: Redis;
  prefix: string;
  workerId: string;
  runningTurns: () => number;
  mcpServers: () => McpServerStatus[];
  sandbox: () => SandboxHealth | null;
  intervalMs?: number;
  ttlMs?: number;
}

export class WorkerHeartbeat {
  private timer: NodeJS.Timeout | null = null;
  private readonly startedAt = Date.now();

  constructor(private readonly opts: HeartbeatOptions) {}

  /** Beats now, then every interval. Failures (Redis away) are silent: readiness reports the outage. */
  start(): Promise<void> {
    if (!this.timer) {
      this.timer = setInterval(() => void this.beat().catch(() => undefined), this.opts.intervalMs ?? HEARTBEAT_INTERVAL_MS);
      this.timer.unref();
    }
    return this.beat().catch(() => undefined);
  }

  /** Stops beating and removes this worker at once (a clean shutdown should not look alive for 30 s). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const { redis, prefix, workerId } = this.opts;
    await redis
      .multi()
      .del(beatKey(prefix, workerId))
      .srem(indexKey(prefix), workerId)
      .exec()
      .catch(() => undefined);
  }

  private async beat(): Promise<void> {
    const { redis, prefix, workerId } = this.opts;
    const beat: WorkerBeat = {
      id: workerId,
      host: hostname(),
      pid: process.pid,
      version: VERSION,
      startedAt: this.startedAt,
      lastHeartbeatAt: Date.now(),
      runningTurns: this.opts.runningTurns(),
      mcpServers: this.opts.mcpServers(),
      sandbox: this.opts.sandbox(),
    };
    await redis
      .multi()
      .set(beatKey(prefix, workerId), JSON.stringify(beat), 'PX', this.opts.ttlMs ?? WORKER_SEEN_WINDOW_MS)
      .sadd(indexKey(prefix), workerId)
      .exec();
  }
}

/** Workers heard from within the window, sorted by id. Prunes ids whose heartbeat has expired. */
export async function listWorkers(redis: Redis, prefix: string): Promise<WorkerBeat[]> {
  const ids = await redis.smembers(indexKey(prefix));
  if (ids.length === 0) return [];
  const values = await redis.mget(ids.map((id) => beatKey(prefix, id)));
  const gone = ids.filter((_, i) => values[i] === null);
  if (gone.length > 0) await redis.srem(indexKey(prefix), ...gone);
  return values
    .flatMap((v) => (v === null ? [] : [parseBeat(v)]))
    .filter((b): b is WorkerBeat => b !== null)
    .sort((a, b) => a.id.localeCompare(b.id));
}

function parseBeat(text: string): WorkerBeat | null {
  try {
    const b = JSON.parse(text) as Partial<WorkerBeat>;
    return typeof b.id === 'string' && typeof b.lastHeartbeatAt === 'number' ? (b as WorkerBeat) : null;
  } catch {
    return null;
  }
}

/**
 * Readiness check for processes that route messages: some worker must be alive to run the turns. A process that
 * runs turns itself passes without asking Redis (its own Redis check covers that dependency).
 */
export function workersSeenCheck(opts: { redis: Redis; prefix: string; localWorker: boolean }): { name: string; check: () => Promise<void> } {
  return {
    name: 'workers',
    check: async () => {
      if (opts.localWorker) return;
      const workers = await listWorkers(opts.redis, opts.prefix);
      if (workers.length === 0) throw new Error(`no worker seen in the last ${WORKER_SEEN_WINDOW_MS / 1000} s`);
    },
  };
}
