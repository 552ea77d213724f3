/**
 * The escape attempts of escape-host and escape-resources, against the Docker backend, obtained the way a worker
 * gets it (start-up detection with its trial run; HERALD_SANDBOX_IMAGE or python:3.12-slim must be pulled).
 * Where no daemon answers every test here is skipped, and the file prints why (detect.test.ts asserts what
 * detection reports then). A daemon that answers but cannot run the trial (the image not pulled) fails them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { MB, gatewayBackend, runner, sandboxRoot } from './test-support.js';

const root = sandboxRoot();
const backend = gatewayBackend('docker', root);
const run = runner(backend, root);
const SECRET = `sk-canary-${randomBytes(12).toString('hex')}`;

/** Skips the test where no Docker daemon answers (the reason is printed once, in beforeAll); fails for any other reason. */
function needsDocker(ctx: TestContext): void {
  const d = backend.detection();
  if (d?.backend) return;
  if (d?.reason?.startsWith('docker: no daemon')) ctx.skip();
  throw new Error(`a Docker daemon answers but the backend cannot be used: ${d?.reason ?? 'no detection'}`);
}

describe('escape attempts (Docker backend)', () => {
  beforeAll(() => {
    const d = backend.detection();
    if (d?.reason?.startsWith('docker: no daemon')) console.log(`Docker escape tests skipped: ${d.reason}`);
    process.env.HERALD_TEST_CANARY_SECRET = SECRET;
  });
  afterAll(() => {
    delete process.env.HERALD_TEST_CANARY_SECRET;
  });

  it('cannot reach the host loopback (Redis, PostgreSQL), DNS or the internet', async (ctx) => {
    needsDocker(ctx);
    const r = await run(
      'python',
      `
import socket
for host, port in [('127.0.0.1', 6379), ('127.0.0.1', 5432), ('1.1.1.1', 53)]:
    try:
        socket.create_connection((host, port), timeout=3).close()
        print('CONNECTED', host, port)
    except OSError:
        print('refused', host, port)
try:
    print('RESOLVED', socket.getaddrinfo('example.com', 443))
except OSError:
    print('no dns')
`,
    );
    expect(r.stdout).not.toMatch(/CONNECTED|RESOLVED/);
    expect(r.stdout).toMatch(/refused 127\.0\.0\.1 6379/);
    expect(r.stdout).toMatch(/no dns/);
  });

  it("cannot read the gateway's environment", async (ctx) => {
    needsDocker(ctx);
    const r = await run('shell', 'env; cat /proc/self/environ /proc/1/environ /proc/*/environ 2>&1');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stdout).not.toMatch(/HERALD_|REDIS_URL|OPENAI_API_KEY/);
  });

  it('cannot write to the system, the mounted session files or the run, nor outside the work dir on the host', async (ctx) => {
    needsDocker(ctx);
    const marker = `pwned-${randomBytes(6).toString('hex')}`;
    const r = await run(
      'shell',
      [
        `for d in /usr /usr/bin /etc / /.run /.session /work/inputs; do echo x > "$d/${marker}" 2>/dev/null && echo "WROTE $d"; done`,
        `echo x > ../../../..${join(root.path, marker)} 2>/dev/null && echo "WROTE via dotdot"`,
      ].join('\n'),
    );
    expect(r.stdout).not.toMatch(/WROTE/);
    expect(existsSync(join(root.path, marker))).toBe(false);
  });

  it('a fork bomb gets no more processes than the limit', async (ctx) => {
    needsDocker(ctx);
    const r = await run(
      'python',
      `
import os, time
n = 0
try:
    while n < 500:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as e:
    print('fork refused after', n, e.__class__.__name__)
`,
      { limits: { processes: 16, wallMs: 10_000 } },
    );
    expect(r.stdout).toMatch(/fork refused after \d+/);
    expect(Number(/after (\d+)/.exec(r.stdout)?.[1])).toBeLessThan(16);
  });

  it('a memory bomb does not get past the memory limit', async (ctx) => {
    needsDocker(ctx);
    const r = await run(
      'python',
      `
chunks = []
try:
    for _ in range(64):
        chunks.append(b'x' * (64 * 1024 * 1024))
    print('ALLOCATED', len(chunks) * 64, 'MB')
except MemoryError:
    print('refused after', len(chunks) * 64, 'MB')
`,
      { limits: { memoryBytes: 256 * MB } },
    );
    // Refused (MemoryError) or killed by the cgroup: either way, never the 4 GB it asked for.
    expect(r.stdout).not.toMatch(/ALLOCATED/);
  });

  it('cannot fill the disk: the work dir and /tmp are capped, and so is what the host keeps', async (ctx) => {
    needsDocker(ctx);
    const r = await run(
      'shell',
      [
        'for d in /work /tmp; do',
        '  i=0; while head -c 1048576 /dev/zero > "$d/fill-$i" 2>/dev/null; do i=$((i+1)); [ $i -ge 64 ] && break; done',
        '  echo "$d $i"',
        'done',
      ].join('\n'),
      { session: 'fill', limits: { diskBytes: 8 * MB } },
    );
    const counts = Object.fromEntries(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' ')),
    );
    for (const d of ['/work', '/tmp']) expect(Number(counts[d])).toBeLessThanOrEqual(8);
    expect(r.files.reduce((n, f) => n + f.data.length, 0)).toBeLessThanOrEqual(8 * MB);
  });

  it('is stopped at the time limit, and endless output at the cap', async (ctx) => {
    needsDocker(ctx);
    const slow = await run('shell', 'echo started; sleep 1000', { limits: { wallMs: 3_000 } });
    expect(slow).toMatchObject({ timedOut: true, exitCode: null });
    expect(slow.durationMs).toBeLessThan(30_000);
    const loud = await run('shell', 'yes herald', { limits: { outputBytes: 4096, wallMs: 30_000 } });
    expect(loud).toMatchObject({ outputCapped: true, timedOut: false });
    expect(loud.stdout.length).toBeLessThanOrEqual(4096);
  });
});
