/**
 * The real gateway process, started as `npm start` starts it: health, readiness following Redis, start-up errors,
 * clean shutdown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { freePort, waitFor } from './helpers/ports.js';
import { startTestRedis, type TestRedis } from './helpers/redis-server.js';

describe('gateway process with no platform configured', () => {
  let redis: TestRedis;
  let gw: GatewayProcess;

  beforeAll(async () => {
    redis = await startTestRedis();
    gw = await startGateway({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await gw?.stop();
    await redis?.stop();
  });

  it('serves /health with status, version and uptime', async () => {
    const res = await fetch(`${gw.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.status).toBe('ok');
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(typeof body.uptime_s).toBe('number');
  });

  it('logs which platforms are disabled and why', () => {
    const msgs = gw.logs().map((l) => String(l.msg));
    expect(msgs).toContain('telegram disabled: TELEGRAM_BOT_TOKEN is not set');
    expect(msgs).toContain('discord disabled: DISCORD_BOT_TOKEN is not set');
    expect(msgs).toContain('slack disabled: SLACK_BOT_TOKEN is not set');
  });

  it('is ready while Redis answers, 503 naming redis while it is down, ready again when it returns', async () => {
    const ready = await fetch(`${gw.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { redis: 'ok', sqlite: 'ok', worker: 'ok' } });

    await redis.stop();
    const down = await waitFor(
      async () => {
        const r = await fetch(`${gw.url}/health/ready`);
        return r.status === 503 ? ((await r.json()) as { failed: string[]; checks: Record<string, string> }) : null;
      },
      { what: '/health/ready to go 503' },
    );
    expect(down.failed).toEqual(['redis']);
    expect(down.checks.sqlite).toBe('ok');
    // Liveness does not depend on Redis.
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
    // The outage is in the log, per connection, without a line per reconnect attempt.
    for (const connection of ['main', 'subscriber']) {
      await gw.waitForLog((l) => l.msg === 'redis error' && l.connection === connection, `the ${connection} connection's error`);
    }

    await redis.start();
    await waitFor(async () => (await fetch(`${gw.url}/health/ready`)).status === 200, {
      timeoutMs: 20_000,
      what: '/health/ready to return to 200',
    });
    await gw.waitForLog((l) => l.msg === 'redis connection ready again' && l.connection === 'main', 'the line saying Redis is back');
    const errorLines = gw.logs().filter((l) => l.msg === 'redis error' && l.connection === 'main');
    expect(errorLines.length).toBeLessThanOrEqual(3);
  });

  it('stops cleanly on SIGTERM', async () => {
    const code = await gw.stop('SIGTERM');
    expect(code).toBe(0);
    expect(gw.logs().map((l) => l.msg)).toContain('stopped');
  });
});

describe('gateway start-up failures', () => {
  it('exits non-zero with one line saying where it looked for Redis and how to start one', async () => {
    const gw = await startGateway({ env: { REDIS_URL: 'redis://127.0.0.1:1' }, waitReady: false });
    const code = await gw.exited;
    expect(code).toBe(1);
    const line = gw.output.find((l) => l.includes('Cannot reach Redis'));
    expect(line).toMatch(/^Cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)\. Start one with `redis-server`/);
    await gw.stop();
  });

  it('exits with one line naming the bad variable', async () => {
    const gw = await startGateway({ env: { HERALD_WORKER_CONCURRENCY: 'lots' }, waitReady: false });
    expect(await gw.exited).toBe(2);
    expect(gw.output).toEqual(['Configuration error: HERALD_WORKER_CONCURRENCY: must be a whole number (got "lots")']);
    await gw.stop();
  });

  it("a profile's model on an endpoint that does not exist: one configuration line naming the profile, exit 2", async () => {
    const gw = await startGateway({
      env: { HERALD_MODEL: 'openai:gpt-4.1-mini', OPENAI_API_KEY: 'sk-test', HERALD_PROFILES: '{"support":{"model":"nowhere:some-model"}}' },
      waitReady: false,
    });
    expect(await gw.exited).toBe(2);
    expect(gw.output.filter((l) => l.startsWith('Configuration error:'))).toEqual([
      expect.stringMatching(/^Configuration error: HERALD_PROFILES: support: .*no endpoint named "nowhere"/),
    ]);
    await gw.stop();
  });

  it('a model on an endpoint that does not exist: one configuration line, exit 2, no stack trace', async () => {
    const gw = await startGateway({ env: { HERALD_MODEL: 'nowhere:some-model' }, waitReady: false });
    expect(await gw.exited).toBe(2);
    expect(gw.output.filter((l) => l.startsWith('Configuration error:'))).toEqual([expect.stringMatching(/no endpoint named "nowhere"/)]);
    expect(gw.output.some((l) => l.includes('start-up failed') || l.includes('"stack"'))).toBe(false);
    await gw.stop();
  });

  it('stops cleanly (exit 0) on a SIGTERM that arrives while it is still starting', async () => {
    // The database is not there yet, so start-up waits for it: the SIGTERM lands mid-start.
    const closedPort = await freePort();
    const gw = await startGateway({
      env: { HERALD_DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/test` },
      waitReady: false,
    });
    await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('cannot reach the database'), 'start-up to wait for the database');
    expect(await gw.stop('SIGTERM')).toBe(0);
    const msgs = gw.logs().map((l) => l.msg);
    expect(msgs).toContain('stopped');
    expect(msgs).not.toContain('start-up failed');
  });

  it('rejects an unknown role', async () => {
    const gw = await startGateway({ args: ['--role', 'boss'], waitReady: false });
    expect(await gw.exited).toBe(2);
    expect(gw.output.join('\n')).toMatch(/--role: must be one of all, ingress, worker/);
    await gw.stop();
  });
});

describe('the compiled build (npm run build), as npm start and the Docker image run it', () => {
  it('starts from dist/ with workspace packages resolved to their dist/, serves /health and stops on SIGTERM', async () => {
    const gw = await startGateway({ compiled: true });
    const body = (await (await fetch(`${gw.url}/health`)).json()) as Record<string, unknown>;
    expect(body.status).toBe('ok');
    // No tsx loader: a TypeScript source could not even be resolved (imports name .js files), so it ran dist/.
    expect(gw.proc.spawnargs).toContain('--conditions=@herald/dist');
    expect(gw.proc.spawnargs.join(' ')).not.toContain('tsx');
    expect(await gw.stop('SIGTERM')).toBe(0);
  });
});
