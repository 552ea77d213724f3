/**
 * A benchmark file run in a fresh process (every run starts from the same heap, so one run's peak RSS does not
 * carry into the next), its figures sent back over IPC (`process.send`) before it exits with 0.
 */
import { fork } from 'node:child_process';

export interface ChildRun {
  execArgv: string[];
  env: NodeJS.ProcessEnv;
  /** The child's working directory (default this process's): another checkout's, for its own tsx and packages. */
  cwd?: string;
  /** Named in the error when the child fails. */
  what: string;
  /** Leave the child's own printing out (its figures still come back). */
  quiet?: boolean;
}

export async function figuresFromChild(file: string, run: ChildRun): Promise<Record<string, number>> {
  const child = fork(file, [], { cwd: run.cwd, execArgv: run.execArgv, env: run.env, stdio: ['ignore', run.quiet ? 'ignore' : 'inherit', 'inherit', 'ipc'] });
  let figures: Record<string, number> | undefined;
  child.on('message', (m) => (figures = m as Record<string, number>));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0 || !figures) throw new Error(`${run.what} exited with ${code}`);
  return figures;
}

/** For a benchmark file run as a child: sends its figures to the parent, if there is one. */
export async function sendFigures(figures: Record<string, number>): Promise<void> {
  if (process.send) await new Promise((resolve) => process.send!(figures, resolve));
}
