/**
 * Runs one sandbox command line as a child process group and watches it: stdout and stderr kept up to the output
 * cap, the files channel (fd 3) up to its own cap, and the whole group SIGKILLed when the wall time passes, the
 * output goes past its cap or the turn is aborted. Killing the group kills bwrap, whose init inside dies with it
 * (--die-with-parent), and with the init every process of the sandbox's pid namespace, setsid or not.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { CappedBuffer } from './output.js';
import type { Execution } from './session-run.js';
import type { SandboxLimits } from './types.js';

export interface SpawnRunInput {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  limits: SandboxLimits;
  signal: AbortSignal;
  /** How many bytes the files channel may carry (the work dir's size plus tar's headers). */
  filesCap: number;
}

type StopReason = 'timeout' | 'output' | 'abort';

export function spawnRun(input: SpawnRunInput): Promise<Execution> {
  const { argv, limits, signal } = input;
  const child = spawn(argv[0], argv.slice(1), { env: { ...input.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  const out = new CappedBuffer(limits.outputBytes);
  const err = new CappedBuffer(limits.outputBytes);
  const files = new CappedBuffer(input.filesCap);
  let stopped: StopReason | null = null;
  let exited = false;
  const stop = (why: StopReason) => {
    if (exited || stopped !== null || child.pid === undefined) return;
    stopped = why;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
  };
  const watch = (stream: Readable | null, buf: CappedBuffer, capIsFatal: boolean) =>
    stream?.on('data', (chunk: Buffer) => {
      if (!buf.push(chunk) && capIsFatal) stop('output');
    });
  watch(child.stdout, out, true);
  watch(child.stderr, err, true);
  watch(child.stdio[3] as Readable | null, files, false);
  const timer = setTimeout(() => stop('timeout'), limits.wallMs);
  const onAbort = () => stop('abort');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  const settle = () => {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  };
  return new Promise<Execution>((resolve, reject) => {
    child.on('error', (e) => {
      settle();
      reject(e);
    });
    // The group is only killed while its leader lives: afterwards its pid may belong to someone else.
    child.on('exit', () => {
      exited = true;
    });
    // 'close': the process exited and every pipe is drained, so the output and the tar are whole. Nothing of the
    // run outlives bwrap: every other process was in its pid namespace, which ended with it.
    child.on('close', (code, sig) => {
      settle();
      const reason = stopped;
      resolve({
        exitCode: reason === null ? code : null,
        signal: sig,
        stdout: out.text(),
        stderr: err.text(),
        timedOut: reason === 'timeout',
        outputCapped: reason === 'output' || out.capped || err.capped,
        aborted: reason === 'abort',
        filesTar: reason === null && !files.capped ? files.bytes() : null,
      });
    });
  });
}
