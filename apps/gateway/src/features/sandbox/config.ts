/** The sandbox's settings (HERALD_SANDBOX_*) as the backends take them. */
import { resolve } from 'node:path';
import type { HeraldConfig } from '../../support/config/load.js';
import type { SandboxSettings } from './detect.js';

const MB = 1024 * 1024;

export type SandboxConfig = Pick<
  HeraldConfig,
  | 'sandboxBackend'
  | 'sandboxDir'
  | 'sandboxImage'
  | 'sandboxTimeoutS'
  | 'sandboxCpuS'
  | 'sandboxMemoryMb'
  | 'sandboxProcesses'
  | 'sandboxDiskMb'
  | 'sandboxOutputKb'
  | 'sandboxNetwork'
>;

export function sandboxSettingsOf(config: SandboxConfig): SandboxSettings {
  return {
    backend: config.sandboxBackend,
    // Absolute: bwrap and the Docker daemon bind it by path.
    dir: resolve(config.sandboxDir),
    image: config.sandboxImage,
    limits: {
      wallMs: config.sandboxTimeoutS * 1000,
      cpuSeconds: config.sandboxCpuS,
      memoryBytes: config.sandboxMemoryMb * MB,
      processes: config.sandboxProcesses,
      diskBytes: config.sandboxDiskMb * MB,
      outputBytes: config.sandboxOutputKb * 1024,
      network: config.sandboxNetwork,
    },
  };
}
