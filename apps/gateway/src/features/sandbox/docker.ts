/**
 * The Docker backend, for hosts that prefer containers, through dockerode. One container per run with the same
 * isolation as the bubblewrap recipe: no network, a read-only root, sized tmpfs for the work dir and /tmp, a
 * pids limit, a memory cgroup (memory and swap), one CPU, CPU-time and file-size ulimits, no-new-privileges, every
 * capability dropped, user 65534. The container only sleeps; the run is an exec in it, and a second exec tars the
 * work dir back (a tmpfs vanishes with its container) before the container is removed.
 *
 * The session's files and the run's code are bind-mounted from the host paths: the Docker daemon must see the
 * gateway's filesystem (the gateway on the same host, or HERALD_SANDBOX_DIR a path both see).
 */
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { COLLECT_ARGV, INPUTS, RUN_DIR, SANDBOX_ENV, SESSION_FILES, WORK, runArgv } from './languages.js';
import { CappedBuffer } from './output.js';
import { runInWorkDir, type Execution } from './session-run.js';
import type { RunDirs } from './work-dir.js';
import type { RunRequest, RunResult, SandboxBackend, SandboxLimits } from './types.js';

const USER = '65534:65534';
/** The container outlives the run's wall time by this much at most, even if the gateway dies mid-run. */
const KEEPALIVE_SLACK_S = 30;
const TAR_SLACK_BYTES = 4 * 1024 * 1024;

export function containerSpec(image: string, dirs: RunDirs, limits: SandboxLimits): Docker.ContainerCreateOptions {
  const size = limits.diskBytes;
  return {
    Image: image,
    Cmd: ['sleep', String(Math.ceil(limits.wallMs / 1000) + KEEPALIVE_SLACK_S)],
    User: USER,
    WorkingDir: WORK,
    Env: Object.entries(SANDBOX_ENV).map(([k, v]) => `${k}=${v}`),
    NetworkDisabled: !limits.network,
    Labels: { 'herald.sandbox': '1' },
    HostConfig: {
      NetworkMode: limits.network ? 'bridge' : 'none',
      ReadonlyRootfs: true,
      Tmpfs: { [WORK]: `rw,size=${size},uid=65534,gid=65534,mode=0755`, '/tmp': `rw,size=${size},mode=1777` },
      ShmSize: size,
      Binds: [`${dirs.files}:${SESSION_FILES}:ro`, `${dirs.inputs}:${WORK}/${INPUTS}:ro`, `${dirs.run}:${RUN_DIR}:ro`],
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      NanoCpus: 1_000_000_000,
      PidsLimit: limits.processes,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Ulimits: [
        { Name: 'cpu', Soft: limits.cpuSeconds, Hard: limits.cpuSeconds },
        { Name: 'fsize', Soft: size, Hard: size },
        { Name: 'nofile', Soft: 256, Hard: 256 },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
      Init: true,
    },
  };
}

/** A writable that keeps bytes up to a cap and calls `onOverflow` once it had to drop some. */
function sink(buf: CappedBuffer, onOverflow: () => void): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (!buf.push(chunk)) onOverflow();
      cb();
    },
  });
}

/** Runs `cmd` in the container; resolves with its exit code once its output ended (null if it never reported one). */
async function execIn(docker: Docker, container: Docker.Container, cmd: string[], out: Writable, err: Writable): Promise<number | null> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, User: USER, WorkingDir: WORK });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve) => {
    docker.modem.demuxStream(stream, out, err);
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', () => resolve());
  });
  // A container killed at the time limit may take its exec records with it.
  const info = await exec.inspect().catch(() => null);
  return typeof info?.ExitCode === 'number' ? info.ExitCode : null;
}

export class DockerBackend implements SandboxBackend {
  readonly name = 'docker' as const;

  constructor(
    private readonly docker: Docker,
    private readonly image: string,
  ) {}

  run(req: RunRequest): Promise<RunResult> {
    return runInWorkDir(req, false, (dirs) => this.execute(dirs, req));
  }

  private async execute(dirs: RunDirs, req: RunRequest): Promise<Execution> {
    const { limits, signal } = req;
    const container = await this.docker.createContainer(containerSpec(this.image, dirs, limits));
    let stopped: 'timeout' | 'output' | 'abort' | null = null;
    const stop = (why: 'timeout' | 'output' | 'abort') => {
      if (stopped !== null) return;
      stopped = why;
      container.kill().catch(() => undefined);
    };
    const timer = setTimeout(() => stop('timeout'), limits.wallMs);
    const onAbort = () => stop('abort');
    signal.addEventListener('abort', onAbort, { once: true });
    const out = new CappedBuffer(limits.outputBytes);
    const err = new CappedBuffer(limits.outputBytes);
    try {
      await container.start();
      if (signal.aborted) onAbort();
      const code = await execIn(
        this.docker,
        container,
        runArgv(req.language),
        sink(out, () => stop('output')),
        sink(err, () => stop('output')),
      );
      let filesTar: Buffer | null = null;
      if (stopped === null) {
        const tar = new CappedBuffer(limits.diskBytes + TAR_SLACK_BYTES);
        await execIn(
          this.docker,
          container,
          COLLECT_ARGV,
          sink(tar, () => undefined),
          sink(new CappedBuffer(4096), () => undefined),
        );
        filesTar = tar.capped ? null : tar.bytes();
      }
      const reason: 'timeout' | 'output' | 'abort' | null = stopped;
      return {
        exitCode: reason === null ? code : null,
        signal: null,
        stdout: out.text(),
        stderr: err.text(),
        timedOut: reason === 'timeout',
        outputCapped: reason === 'output' || out.capped || err.capped,
        aborted: reason === 'abort',
        filesTar: reason === null ? filesTar : null,
      };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      await container.remove({ force: true }).catch(() => undefined);
    }
  }
}
