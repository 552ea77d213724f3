/**
 * Escape attempts from inside the bubblewrap sandbox against the host's resources: a fork bomb, a memory bomb,
 * filling the disk, running past the time limit (with children that detach with setsid), processes left behind,
 * endless output, burning CPU. Each is cut off; nothing of the run is left on the host afterwards; and the gateway
 * (this test process) still answers and still runs code.
 */
import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionWorkDir } from './work-dir.js';
import { MB, gatewayBackend, hostProcessesWith, runner, sandboxRoot, waitForHostProcesses } from './test-support.js';

const root = sandboxRoot();
// The backend as a worker gets it at start-up (the gateway's own detection), not one built by hand.
const run = runner(gatewayBackend('bubblewrap', root), root);
const marker = () => `herald-escape-${randomBytes(6).toString('hex')}`;

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) total += (await stat(join(e.parentPath, e.name))).size;
  }
  return total;
}

describe('escape attempts against the host resources (bubblewrap)', () => {
  afterEach(async () => {
    // The gateway is unharmed: it still runs code, promptly.
    const ok = await run('shell', 'echo still fine', { session: 'health' });
    expect(ok).toMatchObject({ exitCode: 0, stdout: 'still fine\n' });
  });

  it('a fork bomb gets no more processes than the limit, and nothing of it survives the run', async () => {
    const m = marker();
    const counted = await run(
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
    expect(counted.stdout).toMatch(/fork refused after \d+ BlockingIOError/);
    expect(Number(/after (\d+)/.exec(counted.stdout)?.[1])).toBeLessThan(16);
    const pending = run('shell', `cat > /tmp/${m}.sh <<'X'\nbash /tmp/${m}.sh & bash /tmp/${m}.sh &\nwait\nX\nbash /tmp/${m}.sh`, {
      limits: { processes: 16, wallMs: 3_000 },
    });
    // The bomb goes off (it shows on the host) and hits the limit: the host keeps far fewer than it asked for.
    const seen = await waitForHostProcesses(m, 4, pending);
    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(seen.length).toBeLessThanOrEqual(16);
    const bomb = await pending;
    expect(bomb.timedOut).toBe(true);
    expect(await hostProcessesWith(m)).toEqual([]);
  });

  it('a memory bomb is refused past the memory limit', async () => {
    const r = await run(
      'python',
      `
chunks = []
try:
    for _ in range(64):
        chunks.append(bytearray(64 * 1024 * 1024))
    print('ALLOCATED', len(chunks) * 64, 'MB')
except MemoryError:
    print('refused after', len(chunks) * 64, 'MB')
`,
      { limits: { memoryBytes: 256 * MB } },
    );
    expect(r.stdout).toMatch(/^refused after \d+ MB/);
    expect(Number(/after (\d+)/.exec(r.stdout)?.[1])).toBeLessThan(256);
  });

  it('cannot fill the disk: the work dir, /tmp and /dev/shm are capped, and so is what the host keeps', async () => {
    const r = await run(
      'shell',
      [
        'for d in /work /tmp /dev/shm; do',
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
    for (const d of ['/work', '/tmp', '/dev/shm']) expect(Number(counts[d])).toBeLessThanOrEqual(8);
    expect(await dirBytes(join(sessionWorkDir(root.path, 'fill'), 'files'))).toBeLessThanOrEqual(8 * MB);
  });

  it('is killed at the time limit, children that detached with setsid included', async () => {
    const m = marker();
    const pending = run(
      'shell',
      `setsid bash -c 'exec -a ${m}-a sleep 1000' & nohup bash -c 'exec -a ${m}-b sleep 1000' >/dev/null 2>&1 & disown\necho started\nsleep 1000`,
      {
        limits: { wallMs: 3_000 },
      },
    );
    // They do run on the host (so "none left" below means killed, not never started).
    expect(await waitForHostProcesses(m, 2, pending)).toHaveLength(2);
    const r = await pending;
    expect(r).toMatchObject({ timedOut: true, exitCode: null, stdout: 'started\n' });
    expect(await hostProcessesWith(m)).toEqual([]);
  });

  it('leaves nothing running after a program that exits early but started detached children', async () => {
    const m = marker();
    const r = await run('shell', `setsid bash -c 'exec -a ${m} sleep 1000' &\nwhile ! pgrep -f ${m} >/dev/null; do :; done\necho left`, {
      limits: { wallMs: 30_000 },
    });
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'left\n' });
    expect(r.durationMs).toBeLessThan(15_000);
    expect(await hostProcessesWith(m)).toEqual([]);
  });

  it('endless output is cut at the cap and the run stopped', async () => {
    const r = await run('shell', 'yes herald', { limits: { outputBytes: 4096, wallMs: 30_000 } });
    expect(r).toMatchObject({ outputCapped: true, timedOut: false, exitCode: null });
    expect(r.stdout.length).toBe(4096);
    expect(r.durationMs).toBeLessThan(15_000);
  });

  it('a busy loop is stopped at its CPU seconds', async () => {
    const r = await run('python', 'while True:\n    pass', { limits: { cpuSeconds: 1, wallMs: 30_000 } });
    // The wrapper reports the program's death by SIGXCPU (24) or SIGKILL (9) as 128 + the signal.
    expect([128 + 24, 128 + 9]).toContain(r.exitCode);
    expect(r.timedOut).toBe(false);
  });

  it('stops at once when the turn is aborted, and leaves nothing running', async () => {
    const m = marker();
    const ac = new AbortController();
    const pending = run('shell', `exec -a ${m} sleep 1000`, { signal: ac.signal, limits: { wallMs: 60_000 } });
    expect(await waitForHostProcesses(m, 1, pending)).toHaveLength(1);
    ac.abort();
    const r = await pending;
    expect(r).toMatchObject({ aborted: true, timedOut: false, exitCode: null });
    expect(r.durationMs).toBeLessThan(30_000);
    expect(await hostProcessesWith(m)).toEqual([]);
  });
});
