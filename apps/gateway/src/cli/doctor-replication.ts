/**
 * `herald doctor` lines for Redis with replicas and Sentinel: what a failover can lose, asked of the servers.
 *   redis replicas    the primary's connected replicas (enough for HERALD_REDIS_WAIT_REPLICAS?) and
 *                     min-replicas-to-write (a primary cut off from its replicas refuses writes instead of taking
 *                     ones the promoted replica will never have);
 *   sentinel h:p      per Sentinel: the primary it names, its quorum, the replicas and Sentinels it knows, and
 *                     SENTINEL CKQUORUM (whether enough Sentinels agree to fail over, and to authorise it).
 */
import { Redis } from 'ioredis';
import type { HeraldConfig } from '../support/config/load.js';
import { redisTarget } from '../support/redis.js';

interface Line {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

const SENTINEL_TIMEOUT_MS = 3_000;

export async function replicationLines(primary: Redis, config: HeraldConfig): Promise<Line[]> {
  const target = redisTarget(config);
  const sentinels = target.sentinels ?? [];
  if (sentinels.length === 0 && config.redisWaitReplicas === 0) return [];
  const lines = [await replicasLine(primary, config, sentinels.length > 0)];
  for (const s of sentinels) lines.push(await sentinelLine(`${s.host}:${s.port}`, config));
  return lines;
}

async function replicasLine(primary: Redis, config: HeraldConfig, sentinel: boolean): Promise<Line> {
  const info = fields(await primary.info('replication'));
  const connected = Number(info.get('connected_slaves') ?? 0);
  const minToWrite = await configValue(primary, 'min-replicas-to-write');
  const wanted = config.redisWaitReplicas;
  const detail = `role ${info.get('role') ?? '?'}, ${connected} connected replica${connected === 1 ? '' : 's'}, min-replicas-to-write ${minToWrite ?? 'unreadable'}`;
  const base = { name: 'redis replicas' };
  if (info.get('role') !== 'master') return { ...base, status: 'fail', detail: `${detail}: Herald is connected to a replica, not the primary` };
  if (wanted > connected) {
    return {
      ...base,
      status: 'fail',
      detail: `${detail}; HERALD_REDIS_WAIT_REPLICAS=${wanted}: no message can be acknowledged until ${wanted} replica${wanted === 1 ? ' is' : 's are'} connected`,
    };
  }
  if (sentinel && connected === 0) return { ...base, status: 'warn', detail: `${detail}; with no replica a failover has nothing to promote` };
  if (sentinel && minToWrite === '0') {
    return {
      ...base,
      status: 'warn',
      detail: `${detail}; a primary cut off from its replicas keeps taking writes the promoted replica never gets: set min-replicas-to-write 1 and min-replicas-max-lag 10`,
    };
  }
  return { ...base, status: 'ok', detail };
}

async function sentinelLine(address: string, config: HeraldConfig): Promise<Line> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  const name = `sentinel ${address}`;
  const client = new Redis({
    host,
    port,
    password: config.redisSentinelPassword,
    tls: config.redisSentinelTls ? {} : undefined,
    lazyConnect: true,
    connectTimeout: SENTINEL_TIMEOUT_MS,
    commandTimeout: SENTINEL_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // ioredis rejects with "Connection is closed."; the socket's own error says why (ECONNREFUSED, a TLS failure).
  let cause: NodeJS.ErrnoException | undefined;
  client.on('error', (err: NodeJS.ErrnoException) => void (cause ??= err));
  try {
    await client.connect();
    const master = pairs((await client.call('SENTINEL', 'MASTER', config.redisSentinelName)) as string[]);
    const summary =
      `primary ${master.get('ip')}:${master.get('port')} (${master.get('flags')}), quorum ${master.get('quorum')}, ` +
      `${master.get('num-slaves')} replica(s), ${Number(master.get('num-other-sentinels') ?? 0) + 1} Sentinel(s)`;
    try {
      await client.call('SENTINEL', 'CKQUORUM', config.redisSentinelName);
    } catch (err) {
      return { name, status: 'fail', detail: `${summary}; ${errorText(err)}` };
    }
    return { name, status: master.get('flags') === 'master' ? 'ok' : 'warn', detail: `${summary}; quorum reachable` };
  } catch (err) {
    const why = cause ? (cause.code ?? cause.message) : errorText(err);
    return { name, status: 'fail', detail: `${why} (REDIS_SENTINELS, REDIS_SENTINEL_NAME=${config.redisSentinelName})` };
  } finally {
    client.disconnect();
  }
}

async function configValue(redis: Redis, key: string): Promise<string | null> {
  try {
    const reply = (await redis.config('GET', key)) as unknown as string[];
    return reply[1] ?? null;
  } catch {
    return null;
  }
}

function fields(info: string): Map<string, string> {
  return new Map(
    info
      .split(/\r?\n/)
      .filter((l) => l.includes(':') && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()] as [string, string]),
  );
}

/** SENTINEL MASTER's flat [key, value, …] reply as a map. */
function pairs(flat: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i], flat[i + 1]);
  return out;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
