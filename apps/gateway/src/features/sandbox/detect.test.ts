/**
 * Backend detection by trial run. Docker is tested where a daemon answers; where none does (this CI machine has
 * no Docker daemon) the test asserts what detection reports instead — "docker: no daemon", and auto choosing
 * bubblewrap — so a missing daemon is visible in the test, never a silent skip.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { describeDetection, detectSandbox, sandboxHealth, type SandboxSettings } from './detect.js';
import { sessionWorkDir } from './work-dir.js';
import { TEST_LIMITS, sandboxRoot } from './test-support.js';

const root = sandboxRoot();
const settings = (backend: SandboxSettings['backend']): SandboxSettings => ({ backend, dir: root.path, image: 'python:3.12-slim', limits: TEST_LIMITS });

async function dockerAnswers(): Promise<boolean> {
  try {
    await new Docker().ping();
    return true;
  } catch {
    return false;
  }
}

describe('sandbox backend detection', () => {
  it('auto picks bubblewrap on this Linux host, after a trial run', async () => {
    const d = await detectSandbox(settings('auto'));
    expect(d.backend?.name).toBe('bubblewrap');
    expect(d.probes[0]).toEqual({ name: 'bubblewrap', ok: true, reason: null });
    expect(describeDetection(d)).toMatch(/^execute_code runs code in bubblewrap/);
  });

  it('docker: runs code in a container when a daemon answers; otherwise detection says "docker: no daemon" and auto picks bubblewrap', async () => {
    if (await dockerAnswers()) {
      const d = await detectSandbox(settings('docker'));
      expect(d.reason).toBeNull();
      const r = await d.backend!.run({
        language: 'python',
        code: "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n    print('CONNECTED')\nexcept OSError:\n    print('no network')\nopen('out.txt', 'w').write('hi')",
        workDir: sessionWorkDir(root.path, 'docker'),
        inputFiles: [],
        limits: TEST_LIMITS,
        signal: new AbortController().signal,
      });
      expect(r).toMatchObject({ exitCode: 0, stdout: 'no network\n' });
      expect(r.files.map((f) => f.path)).toEqual(['out.txt']);
      return;
    }
    console.log('docker: no daemon answers on this machine; asserting what detection reports instead');
    const only = await detectSandbox(settings('docker'));
    expect(only.backend).toBeNull();
    expect(only.reason).toMatch(/^docker: no daemon \(/);
    expect(describeDetection(only)).toMatch(/^execute_code not offered: docker: no daemon/);
    const auto = await detectSandbox(settings('auto'));
    expect(auto.backend?.name).toBe('bubblewrap');
    expect(sandboxHealth(auto)).toEqual({ backend: 'bubblewrap', unavailable: [expect.stringMatching(/^docker: no daemon/)] });
    expect(describeDetection(auto)).toMatch(/^execute_code runs code in bubblewrap \(docker: no daemon/);
  });

  it('off offers no backend and says so', async () => {
    const d = await detectSandbox(settings('off'));
    expect(d).toEqual({ backend: null, probes: [], reason: 'HERALD_SANDBOX_BACKEND=off' });
    expect(describeDetection(d)).toBe('execute_code not offered: HERALD_SANDBOX_BACKEND=off');
  });

  it('a sandbox dir the sandbox cannot reach fails the trial run with the reason', async () => {
    const locked = join(root.path, 'locked');
    await mkdir(locked, { mode: 0o700 });
    await chmod(locked, 0o700);
    // bwrap runs as the sandbox's uid: it cannot bind what lies below a folder only root may enter.
    const d = await detectSandbox({ ...settings('bubblewrap'), dir: join(locked, 'sandbox') });
    expect(d.backend).toBeNull();
    expect(d.reason).toMatch(/^bubblewrap: a trial run failed: bwrap: .*Permission denied/);
  });

  it('a sandbox dir that cannot be made is a reason, not a failed start', async () => {
    const file = join(root.path, 'a-file');
    await writeFile(file, 'not a folder');
    const d = await detectSandbox({ ...settings('bubblewrap'), dir: join(file, 'sandbox') });
    expect(d.backend).toBeNull();
    expect(d.reason).toMatch(/^bubblewrap: a trial run failed: ENOTDIR/);
  });
});
