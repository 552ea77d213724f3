/**
 * What the Docker backend asks the daemon for (this machine has no daemon: detect.test.ts says so; where one
 * answers, it runs code there too). The container must be as closed as the bubblewrap recipe.
 */
import { describe, expect, it } from 'vitest';
import { containerSpec } from './docker.js';
import { TEST_LIMITS } from './test-support.js';

describe('the Docker backend container', () => {
  it('has no network, a read-only root, sized tmpfs, limits, no capabilities and an unprivileged user', () => {
    const spec = containerSpec('python:3.12-slim', { files: '/s/files', inputs: '/s/inputs', run: '/s/run-1' }, TEST_LIMITS);
    expect(spec).toMatchObject({ User: '65534:65534', NetworkDisabled: true, Env: expect.not.arrayContaining([expect.stringMatching(/^HERALD_|KEY|TOKEN/)]) });
    expect(spec.HostConfig).toMatchObject({
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      Tmpfs: { '/work': expect.stringContaining(`size=${TEST_LIMITS.diskBytes}`), '/tmp': expect.stringContaining(`size=${TEST_LIMITS.diskBytes}`) },
      Memory: TEST_LIMITS.memoryBytes,
      MemorySwap: TEST_LIMITS.memoryBytes,
      PidsLimit: TEST_LIMITS.processes,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Binds: ['/s/files:/.session:ro', '/s/inputs:/work/inputs:ro', '/s/run-1:/.run:ro'],
    });
    expect(spec.HostConfig?.Ulimits).toEqual(expect.arrayContaining([{ Name: 'cpu', Soft: TEST_LIMITS.cpuSeconds, Hard: TEST_LIMITS.cpuSeconds }]));
    expect(containerSpec('img', { files: 'f', inputs: 'i', run: 'r' }, { ...TEST_LIMITS, network: true }).HostConfig?.NetworkMode).toBe('bridge');
  });
});
