/**
 * Risky Redis settings as a new operator meets them: the real gateway process and `herald doctor` against real
 * redis-server processes started without persistence or with an eviction policy that drops jobs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runHerald } from './helpers/cli.js';
import { startGateway } from './helpers/gateway.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

const dir = mkdtempSync(join(tmpdir(), 'herald-safety-'));
const servers: TestRedis[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function redisWith(args: string[]): Promise<TestRedis> {
  const server = await startTestRedis({ args: ['--dir', dir, ...args] });
  servers.push(server);
  return server;
}

interface SafetyJson {
  check: string;
  id: string;
  status: string;
  detail: string;
  risk: string | null;
  accepted: boolean;
}

describe('a Redis without persistence (--appendonly no --save "")', () => {
  it('the gateway starts and says, at start-up and in /health/detailed, that queued messages are lost on restart', async () => {
    const redis = await redisWith(['--appendonly', 'no', '--save', '']);
    const gw = await startGateway({ env: { REDIS_URL: redis.url, HERALD_DB: join(dir, 'persistence.db') } });
    try {
      const line = await gw.waitForLog((l) => l.check === 'redis persistence', 'the persistence warning');
      expect(line.level).toBe(40);
      expect(line.msg).toMatch(
        /^redis persistence: no persistence \(appendonly no, save ""\); queued messages are lost if Redis restarts; fix: turn on the append-only file/,
      );
      const body = (await (await fetch(`${gw.url}/health/detailed`)).json()) as { safety: SafetyJson[] };
      expect(body.safety.find((s) => s.check === 'redis persistence')).toMatchObject({
        id: 'redis-persistence',
        status: 'warn',
        risk: 'queued messages are lost if Redis restarts',
        accepted: false,
      });
      expect(body.safety.find((s) => s.check === 'redis eviction')).toMatchObject({ status: 'ok' });
      expect(body.safety.map((s) => s.check)).toEqual(['redis persistence', 'redis eviction', 'redis version', 'sqlite filesystem', 'sqlite disk']);
    } finally {
      await gw.stop();
    }
  });

  it('HERALD_ACCEPT_RISKS=redis-persistence: an info line that the risk is accepted, no warning', async () => {
    const redis = await redisWith(['--appendonly', 'no', '--save', '']);
    const gw = await startGateway({ env: { REDIS_URL: redis.url, HERALD_DB: join(dir, 'accepted.db'), HERALD_ACCEPT_RISKS: 'redis-persistence' } });
    try {
      const line = await gw.waitForLog((l) => l.check === 'redis persistence', 'the accepted-risk line');
      expect(line.level).toBe(30);
      expect(line.msg).toContain('accepted risk (HERALD_ACCEPT_RISKS=redis-persistence): queued messages are lost if Redis restarts');
      const body = (await (await fetch(`${gw.url}/health/detailed`)).json()) as { safety: SafetyJson[] };
      expect(body.safety.find((s) => s.check === 'redis persistence')).toMatchObject({ status: 'ok', accepted: true });
    } finally {
      await gw.stop();
    }
  });
});

describe('a Redis that evicts keys (--maxmemory-policy allkeys-lru)', () => {
  it('the gateway refuses to start, naming the setting, what it risks and the fix', async () => {
    const redis = await redisWith(['--appendonly', 'yes', '--maxmemory-policy', 'allkeys-lru', '--maxmemory', '256mb']);
    const gw = await startGateway({ env: { REDIS_URL: redis.url, HERALD_DB: join(dir, 'evicting.db') }, waitReady: false });
    expect(await gw.exited).toBe(1);
    const refusal = gw.output.find((l) => l.startsWith('Refusing to start:'));
    expect(refusal).toBe(
      'Refusing to start: redis eviction: maxmemory-policy allkeys-lru (maxmemory 256.0 MB); when Redis fills up it deletes keys, queued jobs and session locks among them: ' +
        'messages are silently lost or answered twice; fix: `CONFIG SET maxmemory-policy noeviction` and `maxmemory-policy noeviction` in redis.conf ' +
        '(or accept the risk with HERALD_ACCEPT_RISKS=redis-eviction)',
    );
  });

  it('with the risk accepted it starts, and /health/detailed still shows it', async () => {
    const redis = await redisWith(['--appendonly', 'yes', '--maxmemory-policy', 'allkeys-lru']);
    const gw = await startGateway({ env: { REDIS_URL: redis.url, HERALD_DB: join(dir, 'evicting-accepted.db'), HERALD_ACCEPT_RISKS: 'redis-eviction' } });
    try {
      const body = (await (await fetch(`${gw.url}/health/detailed`)).json()) as { safety: SafetyJson[] };
      expect(body.safety.find((s) => s.check === 'redis eviction')).toMatchObject({
        status: 'ok',
        accepted: true,
        detail: expect.stringMatching(/^maxmemory-policy allkeys-lru/),
      });
      expect(body.safety.find((s) => s.check === 'redis persistence')).toMatchObject({ status: 'ok', accepted: false });
    } finally {
      await gw.stop();
    }
  });

  it('herald doctor fails the eviction check and warns about persistence, one line each', async () => {
    const redis = await redisWith(['--appendonly', 'no', '--save', '', '--maxmemory-policy', 'allkeys-lru']);
    const run = await runHerald(['doctor'], { cwd: dir, env: { REDIS_URL: redis.url, HERALD_DB: join(dir, 'doctor.db'), HERALD_STORE_MIN_FREE_MB: '0' } });
    expect(run.code).toBe(1);
    expect(run.lines.find((l) => l.includes('redis eviction'))).toMatch(
      /^✗ redis eviction\s+maxmemory-policy allkeys-lru \(maxmemory is not set, so nothing is evicted until someone sets it\); when Redis fills up/,
    );
    expect(run.lines.find((l) => l.includes('redis persistence'))).toMatch(
      /^! redis persistence\s+no persistence \(appendonly no, save ""\); queued messages are lost if Redis restarts; fix: /,
    );
    expect(run.lines.find((l) => l.includes('redis version'))).toMatch(/^✓ redis version\s+Redis \d/);
    expect(run.lines.at(-1)).toMatch(/^doctor: 1 of \d+ checks failed: redis eviction$/);
  });
});
