/**
 * One run in a session's work dir, the same for every backend: stage the code and the user's files, let the
 * backend execute, then read the work dir's tar back, save it as the session's files and report what changed.
 */
import { filesFromTar, MAX_WORK_FILES } from './tar-files.js';
import { changedFiles, removeRunDir, savedFiles, saveFiles, stageRun, type RunDirs } from './work-dir.js';
import type { RunRequest, RunResult, WorkFile } from './types.js';

/** What a backend's execution gives back, before the files are read. */
export interface Execution {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  outputCapped: boolean;
  aborted: boolean;
  /** The work dir as a tar, when the run got that far (not after a kill). */
  filesTar: Buffer | null;
}

export type Execute = (dirs: RunDirs, req: RunRequest) => Promise<Execution>;

export async function runInWorkDir(req: RunRequest, collectOnFd3: boolean, execute: Execute): Promise<RunResult> {
  const started = Date.now();
  const dirs = await stageRun(req.workDir, req.language, req.code, req.inputFiles, collectOnFd3);
  try {
    const before = await savedFiles(dirs.files);
    const ex = await execute(dirs, req);
    let files: WorkFile[] = [];
    let stderr = ex.stderr;
    if (ex.filesTar !== null && ex.filesTar.length > 0) {
      try {
        const all = await filesFromTar(ex.filesTar, { maxFiles: MAX_WORK_FILES, maxTotalBytes: req.limits.diskBytes });
        await saveFiles(dirs.files, all);
        files = changedFiles(before, all);
      } catch (err) {
        stderr += `\n[sandbox] the work dir could not be read back: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    const { filesTar: _, ...rest } = ex;
    return { ...rest, stderr, files, durationMs: Date.now() - started };
  } finally {
    await removeRunDir(dirs);
  }
}
