/**
 * CPU time of the servers a run talks to, so a run can print the whole machine's work per message and not only its
 * own process's: on a 2-core machine, what Redis and PostgreSQL spend answering a pipeline competes with the pipeline
 * for the same cores, and with PostgreSQL that is most of the difference from SQLite, which runs inside the process.
 *
 * - Redis counts its own (`INFO cpu`: `used_cpu_user` + `used_cpu_sys`, every thread of the server), wherever it runs.
 * - PostgreSQL does not, so its time is read from /proc when the server runs on this machine (Linux): the postmaster's
 *   own and its reaped children's (every backend that has exited, the bench's included), plus each live process it
 *   started (backends, the WAL writer, the checkpointer). Elsewhere it is left out (null), and so is the machine's sum.
 *   The whole server: on an otherwise idle one, what the run cost it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';

/** /proc's clock ticks a second (Linux's USER_HZ, 100 on every architecture Node runs on). */
const TICKS_PER_S = 100;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces), from field 3 (`state`) on. */
function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // not Linux, or the process has just exited (its time is then in its parent's reaped total)
  }
}

/** Field n of /proc/<pid>/stat (as `man 5 proc` numbers them) from statFields' list. */
const field = (fields: string[], n: number): number => Number(fields[n - 3]);

/** The PostgreSQL server's CPU so far (ms), or null when its processes are not on this machine. */
function postgresCpuMs(postmaster: number): number | null {
  const own = statFields(postmaster);
  if (!own) return null;
  // utime, stime, cutime, cstime: its own time and its exited children's.
  let ticks = field(own, 14) + field(own, 15) + field(own, 16) + field(own, 17);
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === postmaster) continue;
    const f = statFields(pid);
    if (f && field(f, 4) === postmaster) ticks += field(f, 14) + field(f, 15);
  }
  return (ticks / TICKS_PER_S) * 1000;
}

/** The postmaster's pid: the parent of a backend of ours, when that backend is on this machine. */
async function findPostmaster(url: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const f = statFields(rows[0].pid);
    return f ? field(f, 4) : null;
  } finally {
    await client.end();
  }
}

async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const value = (name: string): number => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return (value('used_cpu_user') + value('used_cpu_sys')) * 1000;
}

/** CPU so far (ms). PostgreSQL's: undefined when the run does not use it, null when its server is not on this machine. */
export interface ServersCpuReading {
  redis: number;
  postgres?: number | null;
}

export interface ServersCpu {
  read(): Promise<ServersCpuReading>;
  close(): Promise<void>;
}

/** Reads the servers' CPU for a run; `postgresUrl` names a database of the server to include (none: Redis only). */
export async function serversCpu(redisUrl: string, postgresUrl?: string): Promise<ServersCpu> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const postmaster = postgresUrl ? await findPostmaster(postgresUrl) : undefined;
  return {
    read: async () => ({
      redis: await redisCpuMs(redis),
      ...(postmaster !== undefined && { postgres: postmaster === null ? null : postgresCpuMs(postmaster) }),
    }),
    close: async () => {
      await redis.quit();
    },
  };
}

/**
 * The servers' CPU a message (or turn: `unit`) between two reads, and the machine's: `ownMs`, this process's and the
 * stand-ins' CPU a message, plus the servers'. Without PostgreSQL's time where the run used it, neither it nor the
 * machine's sum is given.
 */
export function serversCpuFigures(before: ServersCpuReading, after: ServersCpuReading, count: number, unit: string, ownMs: number): Record<string, number> {
  const redis = (after.redis - before.redis) / count;
  const figures: Record<string, number> = { [`redis_cpu_ms_per_${unit}`]: redis };
  if (before.postgres === undefined) return { ...figures, [`machine_cpu_ms_per_${unit}`]: ownMs + redis };
  if (before.postgres === null || after.postgres === null || after.postgres === undefined) return figures;
  const postgres = (after.postgres - before.postgres) / count;
  return { ...figures, [`postgres_cpu_ms_per_${unit}`]: postgres, [`machine_cpu_ms_per_${unit}`]: ownMs + redis + postgres };
}
