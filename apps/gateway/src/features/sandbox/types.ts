/**
 * The sandbox contract: what `execute_code` asks a backend (bubblewrap or Docker) to run, and what comes back.
 * A backend runs one program in isolation — no network, a read-only system, a sized work dir — under the limits
 * given, and hands back its output (capped) and the files it left in the work dir.
 */

export const SANDBOX_LANGUAGES = ['python', 'javascript', 'shell'] as const;
export type SandboxLanguage = (typeof SANDBOX_LANGUAGES)[number];

const SANDBOX_BACKENDS = ['bubblewrap', 'docker'] as const;
export type SandboxBackendName = (typeof SANDBOX_BACKENDS)[number];

export interface SandboxLimits {
  /** Wall time of one run; past it every process of the run is killed. */
  wallMs: number;
  /** CPU seconds of each process (RLIMIT_CPU; Docker: the same ulimit). */
  cpuSeconds: number;
  /** Memory of each process (bubblewrap: address space; Docker: the container's cgroup). */
  memoryBytes: number;
  /** Processes and threads at once. */
  processes: number;
  /** Size of the work dir (a tmpfs); /tmp gets the same. */
  diskBytes: number;
  /** stdout and stderr each keep this many bytes; a run that writes more is stopped. */
  outputBytes: number;
  /** Network access (off by default: the sandbox then has only its own loopback). */
  network: boolean;
}

/** A file the user sent, readable inside at `inputs/<name>`. */
export interface InputFile {
  name: string;
  data: Buffer;
}

/** A file the run left in the work dir (path relative to it, `/`-separated). */
export interface WorkFile {
  path: string;
  data: Buffer;
}

export interface RunRequest {
  language: SandboxLanguage;
  code: string;
  /** The session's work dir on the host (see work-dir.ts): the previous runs' files, restored into the sandbox. */
  workDir: string;
  inputFiles: readonly InputFile[];
  limits: SandboxLimits;
  signal: AbortSignal;
}

export interface RunResult {
  /** The program's exit code; null when it was killed (time limit, output cap, abort) or died by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** stdout or stderr went past `outputBytes`: the run was stopped and the output cut. */
  outputCapped: boolean;
  aborted: boolean;
  /** Files new or changed in the work dir by this run (not the user's inputs). */
  files: WorkFile[];
  durationMs: number;
}

export interface SandboxBackend {
  readonly name: SandboxBackendName;
  run(req: RunRequest): Promise<RunResult>;
}

/** Why a backend cannot be used here, in one line an operator can act on ("docker: no daemon …"). */
export interface BackendProbe {
  name: SandboxBackendName;
  ok: boolean;
  reason: string | null;
}
