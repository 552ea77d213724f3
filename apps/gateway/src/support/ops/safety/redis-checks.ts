/**
 * What the queue's Redis is set up to lose. Every message is a BullMQ job in Redis, so:
 *   persistence   without AOF (or with only RDB snapshots) a Redis restart loses what was queued since;
 *   eviction      any maxmemory-policy but noeviction lets a full Redis delete jobs and locks (BullMQ's docs:
 *                 "the only setting that guarantees the correct behavior of the queues");
 *   version       BullMQ refuses servers below its minimum and recommends a newer one;
 *   cluster       a Redis Cluster endpoint is refused at start-up (see cluster below).
 * Settings are read with CONFIG GET; managed services that rename or forbid CONFIG are read through INFO, which
 * tells AOF and the eviction policy but not the snapshot rules.
 */
import { RedisConnection } from 'bullmq';
import type { Redis } from 'ioredis';
import { formatBytes, type SafetyFinding } from '../../config/risks.js';

const AOF_FIX = 'turn on the append-only file: `CONFIG SET appendonly yes` and `appendonly yes` + `appendfsync everysec` in redis.conf';

export async function checkRedis(redis: Redis): Promise<SafetyFinding[]> {
  const info = parseInfo(await redis.info());
  const config = await readConfig(redis, ['appendonly', 'appendfsync', 'save', 'maxmemory-policy', 'maxmemory']);
  return [persistence(info, config), eviction(info, config), version(info), ...cluster(info)];
}

/**
 * Redis Cluster is refused, not supported: a session's mailbox scripts touch its mailbox, lock, fence and seen keys
 * together with keys of BullMQ's queue, and BullMQ's own scripts touch many keys of one queue; a cluster answers
 * such scripts with CROSSSLOT unless every key shares one hash tag — which would put all of Herald in one slot, on
 * one node, and buy nothing over a primary with replicas. High availability comes from Sentinel (REDIS_SENTINELS).
 */
function cluster(info: Map<string, string>): SafetyFinding[] {
  if (info.get('cluster_enabled') !== '1') return [];
  return [
    {
      id: 'redis-cluster',
      check: 'redis cluster',
      status: 'error',
      unacceptable: true,
      detail: 'this Redis is a Redis Cluster node (cluster_enabled:1)',
      risk: "Herald does not run on Redis Cluster: its per-session scripts and BullMQ's touch several keys at once, which a cluster refuses across slots",
      fix: 'point REDIS_URL at a standalone primary, or use a primary with replicas and Sentinel for failover (REDIS_SENTINELS, REDIS_SENTINEL_NAME)',
    },
  ];
}

type Config = Map<string, string> | { error: string };

/** CONFIG GET per name (one name per call: several at once needs Redis 7); an error when CONFIG is refused. */
async function readConfig(redis: Redis, names: string[]): Promise<Config> {
  const out = new Map<string, string>();
  try {
    for (const name of names) {
      const reply = (await redis.config('GET', name)) as unknown as string[];
      if (reply.length >= 2) out.set(name, reply[1]);
    }
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
  return out;
}

function parseInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) out.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  return out;
}

function persistence(info: Map<string, string>, config: Config): SafetyFinding {
  const base = { id: 'redis-persistence', check: 'redis persistence' } as const;
  if (!(config instanceof Map)) {
    if (info.get('aof_enabled') === '1')
      return { ...base, status: 'ok', detail: `append-only file on (its fsync policy cannot be read: CONFIG GET refused: ${config.error})` };
    return {
      ...base,
      status: 'warn',
      detail: `append-only file off; whether RDB snapshots are taken cannot be read (CONFIG GET refused: ${config.error})`,
      risk: 'queued messages since the last snapshot, or all of them without snapshots, are lost if Redis restarts',
      fix: AOF_FIX,
    };
  }
  const aof = config.get('appendonly') === 'yes';
  const fsync = config.get('appendfsync') ?? 'everysec';
  const save = (config.get('save') ?? '').trim();
  if (aof && fsync === 'always') return { ...base, status: 'ok', detail: 'append-only file, synced on every write' };
  if (aof && fsync === 'everysec') {
    return { ...base, status: 'ok', detail: 'append-only file, synced every second (a machine crash loses at most about a second of queued messages)' };
  }
  if (aof) {
    return {
      ...base,
      status: 'warn',
      detail: `append-only file with appendfsync ${fsync}`,
      risk: 'the operating system decides when the file reaches the disk (often every 30 s): messages queued in that window are lost if the machine crashes',
      fix: '`appendfsync everysec` (CONFIG SET appendfsync everysec, and in redis.conf)',
    };
  }
  if (save) {
    const window = longestSnapshotWindow(save);
    return {
      ...base,
      status: 'warn',
      detail: `RDB snapshots only (save ${save})`,
      risk: `messages queued since the last snapshot${window ? ` (up to ${window} when traffic is light)` : ''} are lost if Redis crashes or is killed`,
      fix: AOF_FIX,
    };
  }
  return {
    ...base,
    status: 'warn',
    detail: 'no persistence (appendonly no, save "")',
    risk: 'queued messages are lost if Redis restarts',
    fix: AOF_FIX,
  };
}

/** `save 3600 1 300 100` → "60 min": the wait before a snapshot when only one change happened. */
function longestSnapshotWindow(save: string): string | null {
  const numbers = save.split(/\s+/).map(Number);
  const seconds: number[] = [];
  for (let i = 0; i + 1 < numbers.length; i += 2) if (Number.isFinite(numbers[i])) seconds.push(numbers[i]);
  if (seconds.length === 0) return null;
  const s = Math.max(...seconds);
  return s >= 120 ? `${Math.round(s / 60)} min` : `${s} s`;
}

function eviction(info: Map<string, string>, config: Config): SafetyFinding {
  const base = { id: 'redis-eviction', check: 'redis eviction' } as const;
  const policy = (config instanceof Map ? config.get('maxmemory-policy') : undefined) ?? info.get('maxmemory_policy');
  if (!policy) return { ...base, status: 'warn', detail: 'maxmemory-policy cannot be read (neither CONFIG GET nor INFO has it)' };
  if (policy === 'noeviction')
    return { ...base, status: 'ok', detail: 'maxmemory-policy noeviction (a full Redis refuses new messages instead of dropping queued ones)' };
  const limit = (config instanceof Map ? config.get('maxmemory') : undefined) ?? info.get('maxmemory');
  const bytes = Number(limit);
  const when =
    limit === '0'
      ? 'maxmemory is not set, so nothing is evicted until someone sets it'
      : `maxmemory ${Number.isFinite(bytes) ? formatBytes(bytes) : 'unknown'}`;
  return {
    ...base,
    status: 'error',
    detail: `maxmemory-policy ${policy} (${when})`,
    risk: 'when Redis fills up it deletes keys, queued jobs and session locks among them: messages are silently lost or answered twice',
    fix: '`CONFIG SET maxmemory-policy noeviction` and `maxmemory-policy noeviction` in redis.conf',
  };
}

function version(info: Map<string, string>): SafetyFinding {
  const base = { id: 'redis-version', check: 'redis version' } as const;
  // BullMQ compares versions for Redis only (Valkey and Dragonfly report compatible features their own way).
  if (info.has('dragonfly_version')) return { ...base, status: 'ok', detail: `Dragonfly ${info.get('dragonfly_version')}` };
  if (info.has('valkey_version')) return { ...base, status: 'ok', detail: `Valkey ${info.get('valkey_version')}` };
  const v = info.get('redis_version');
  if (!v) return { ...base, status: 'warn', detail: 'INFO does not report redis_version' };
  const minimum = RedisConnection.minimumVersion;
  const recommended = RedisConnection.recommendedMinimumVersion;
  if (compareVersions(v, minimum) < 0) {
    return {
      ...base,
      status: 'error',
      unacceptable: true,
      detail: `Redis ${v}`,
      risk: `BullMQ needs Redis ${minimum} or later and refuses to run on this one`,
      fix: `upgrade Redis to ${recommended} or later`,
    };
  }
  if (compareVersions(v, recommended) < 0) {
    return {
      ...base,
      status: 'warn',
      detail: `Redis ${v}`,
      risk: `BullMQ recommends Redis ${recommended} or later; older servers miss fixes its scripts rely on for timing and blocking reads`,
      fix: `upgrade Redis to ${recommended} or later`,
    };
  }
  return { ...base, status: 'ok', detail: `Redis ${v} (BullMQ needs ${minimum}, recommends ${recommended})` };
}

/** Numeric comparison of dotted versions (`7.0.15` vs `6.2.0`); missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((n) => parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
