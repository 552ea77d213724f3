/**
 * The Redis checks against real redis-server processes started with the risky settings (each test its own).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestRedis } from '../../../../../../test/helpers/redis-server.js';
import { redisFindings, refusals } from './checks.js';
import { describeFinding, type SafetyFinding } from '../../config/risks.js';
import { compareVersions } from './redis-checks.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function findingsOf(args: string[], accept: string[] = []): Promise<Map<string, SafetyFinding>> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-redis-safety-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const server = await startTestRedis({ args: ['--dir', dir, ...args] });
  cleanups.push(() => server.stop());
  const redis = new Redis(server.url);
  cleanups.push(async () => redis.disconnect());
  const found = await redisFindings(redis, { acceptRisks: accept });
  return new Map(found.map((f) => [f.check, f]));
}

describe('Redis safety checks', () => {
  it('no persistence (--appendonly no --save ""): a warning that says queued messages are lost on restart', async () => {
    const f = (await findingsOf(['--appendonly', 'no', '--save', ''])).get('redis persistence')!;
    expect(f.status).toBe('warn');
    expect(f.detail).toBe('no persistence (appendonly no, save "")');
    expect(f.risk).toBe('queued messages are lost if Redis restarts');
    expect(describeFinding(f)).toContain('appendonly yes');
    expect(describeFinding(f)).toContain('HERALD_ACCEPT_RISKS=redis-persistence');
  });

  it('RDB snapshots only: a warning naming the snapshot rules and the window they leave', async () => {
    const f = (await findingsOf(['--appendonly', 'no', '--save', '900 1 300 10'])).get('redis persistence')!;
    expect(f.status).toBe('warn');
    expect(f.detail).toBe('RDB snapshots only (save 900 1 300 10)');
    expect(f.risk).toBe('messages queued since the last snapshot (up to 15 min when traffic is light) are lost if Redis crashes or is killed');
  });

  it('AOF synced by the operating system (appendfsync no): a warning; AOF every second: ok', async () => {
    const lazy = (await findingsOf(['--appendonly', 'yes', '--appendfsync', 'no'])).get('redis persistence')!;
    expect(lazy.status).toBe('warn');
    expect(lazy.detail).toBe('append-only file with appendfsync no');
    expect(lazy.risk).toMatch(/lost if the machine crashes/);
    const everysec = (await findingsOf(['--appendonly', 'yes', '--appendfsync', 'everysec'])).get('redis persistence')!;
    expect(everysec.status).toBe('ok');
    expect(everysec.detail).toMatch(/^append-only file, synced every second/);
  });

  it('an accepted risk stays visible but is no longer a warning', async () => {
    const f = (await findingsOf(['--appendonly', 'no', '--save', ''], ['redis-persistence'])).get('redis persistence')!;
    expect(f).toMatchObject({ status: 'ok', accepted: true, risk: 'queued messages are lost if Redis restarts' });
    expect(describeFinding(f)).toContain('accepted risk (HERALD_ACCEPT_RISKS=redis-persistence)');
  });

  it('maxmemory-policy allkeys-lru is an error (BullMQ loses jobs); noeviction is ok', async () => {
    const found = await findingsOf(['--maxmemory-policy', 'allkeys-lru', '--maxmemory', '64mb']);
    const f = found.get('redis eviction')!;
    expect(f.status).toBe('error');
    expect(f.detail).toBe('maxmemory-policy allkeys-lru (maxmemory 64.0 MB)');
    expect(f.risk).toMatch(/deletes keys, queued jobs and session locks among them/);
    const safe = (await findingsOf(['--maxmemory-policy', 'noeviction'])).get('redis eviction')!;
    expect(safe.status).toBe('ok');
  });

  it('an accepted eviction policy becomes a warning-free finding, an unset maxmemory is named', async () => {
    const f = (await findingsOf(['--maxmemory-policy', 'volatile-lru'], ['redis-eviction'])).get('redis eviction')!;
    expect(f).toMatchObject({ status: 'ok', accepted: true });
    expect(f.detail).toBe('maxmemory-policy volatile-lru (maxmemory is not set, so nothing is evicted until someone sets it)');
  });

  it('the version is compared with what BullMQ needs and recommends', async () => {
    const f = (await findingsOf([])).get('redis version')!;
    expect(f.status).toBe('ok');
    expect(f.detail).toMatch(/^Redis \d+\.\d+\.\d+ \(BullMQ needs 5\.0\.0, recommends 6\.2\.0\)$/);
    expect(compareVersions('6.0.16', '6.2.0')).toBeLessThan(0);
    expect(compareVersions('7.0.15', '6.2.0')).toBeGreaterThan(0);
    expect(compareVersions('4.0.14', '5.0.0')).toBeLessThan(0);
    expect(compareVersions('6.2', '6.2.0')).toBe(0);
  });

  it('a Redis that refuses CONFIG (as managed services do) is read through INFO', async () => {
    const found = await findingsOf(['--appendonly', 'no', '--save', '', '--rename-command', 'CONFIG', '""', '--maxmemory-policy', 'allkeys-lfu']);
    const p = found.get('redis persistence')!;
    expect(p.status).toBe('warn');
    expect(p.detail).toMatch(/^append-only file off; whether RDB snapshots are taken cannot be read \(CONFIG GET refused: .*unknown command/i);
    // INFO still tells the eviction policy, and that is enough to refuse it.
    expect(found.get('redis eviction')).toMatchObject({
      status: 'error',
      detail: 'maxmemory-policy allkeys-lfu (maxmemory is not set, so nothing is evicted until someone sets it)',
    });
  });

  it('a Redis Cluster node is refused at start-up, and accepting the risk does not change that; a standalone Redis has no such line', async () => {
    const found = await findingsOf(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'], ['redis-cluster']);
    const f = found.get('redis cluster')!;
    expect(f).toMatchObject({ status: 'error', unacceptable: true, detail: 'this Redis is a Redis Cluster node (cluster_enabled:1)' });
    expect(refusals([...found.values()])).toContainEqual(f);
    expect(describeFinding(f)).toContain('REDIS_SENTINELS');
    expect((await findingsOf([])).has('redis cluster')).toBe(false);
  });
});
