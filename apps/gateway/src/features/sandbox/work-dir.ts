/**
 * A session's work dir on the host, under HERALD_SANDBOX_DIR: `files/` keeps what earlier runs left (restored
 * into the sandbox's sized work dir before each run), `inputs/` the files the user sent (read-only inside, at
 * `inputs/`), and `run-<id>/` one run's script and code. The sandbox itself never writes here: the gateway saves
 * the run's files after the run, from the tar the sandbox streamed out.
 *
 * Modes: the root is 0711 (nobody lists the sessions), the rest world-readable, because the sandbox runs as an
 * unprivileged uid that must read what it is given.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { INPUTS, programFile, wrapperScript } from './languages.js';
import type { InputFile, SandboxLanguage, WorkFile } from './types.js';

export interface RunDirs {
  files: string;
  inputs: string;
  run: string;
}

/** A user's file name as a plain name in `inputs/` (no folders, no control characters, never `.` or `..`). */
function inputName(raw: string, index: number): string {
  // eslint-disable-next-line no-control-regex
  const name = (raw.split(/[\\/]/).pop() ?? '')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 120);
  return name === '' || name === '.' || name === '..' ? `file-${index + 1}` : name;
}

/** The work dir of one session: a hash of its id, so ids never become paths. */
export function sessionWorkDir(root: string, sessionId: string): string {
  return join(root, createHash('sha256').update(sessionId).digest('hex').slice(0, 32));
}

export async function ensureSandboxRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  await chmod(root, 0o711);
}

/** Writes the user's files, the script and the code of one run; returns the paths the backend mounts. */
export async function stageRun(
  workDir: string,
  language: SandboxLanguage,
  code: string,
  inputs: readonly InputFile[],
  collectOnFd3: boolean,
): Promise<RunDirs> {
  const dirs: RunDirs = { files: join(workDir, 'files'), inputs: join(workDir, INPUTS), run: join(workDir, `run-${randomBytes(6).toString('hex')}`) };
  await mkdir(workDir, { recursive: true, mode: 0o755 });
  await chmod(workDir, 0o755);
  await mkdir(dirs.files, { recursive: true, mode: 0o755 });
  await rm(dirs.inputs, { recursive: true, force: true });
  await mkdir(dirs.inputs, { mode: 0o755 });
  const used = new Set<string>();
  for (const [i, f] of inputs.entries()) {
    let name = inputName(f.name, i);
    if (used.has(name)) name = `${i + 1}-${name}`;
    used.add(name);
    await writeFile(join(dirs.inputs, name), f.data, { mode: 0o644 });
  }
  await mkdir(dirs.run, { mode: 0o755 });
  await writeFile(join(dirs.run, 'run.sh'), wrapperScript(collectOnFd3), { mode: 0o644 });
  await writeFile(join(dirs.run, programFile(language)), code, { mode: 0o644 });
  return dirs;
}

export async function removeRunDir(dirs: RunDirs): Promise<void> {
  await rm(dirs.run, { recursive: true, force: true });
}

/** The session's saved files, by path. */
export async function savedFiles(filesDir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const entries = await readdir(filesDir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    const full = join(e.parentPath, e.name);
    out.set(full.slice(filesDir.length + 1), await readFile(full));
  }
  return out;
}

/** Files new or changed against what was saved; hidden files and folders (caches) are kept but not reported. */
export function changedFiles(before: ReadonlyMap<string, Buffer>, after: readonly WorkFile[]): WorkFile[] {
  return after.filter((f) => {
    if (f.path.split('/').some((p) => p.startsWith('.'))) return false;
    const old = before.get(f.path);
    return old === undefined || !old.equals(f.data);
  });
}

/** Replaces the saved files with the run's (written beside, then swapped, so a crash leaves one whole set). */
export async function saveFiles(filesDir: string, files: readonly WorkFile[]): Promise<void> {
  const next = `${filesDir}.next-${randomBytes(4).toString('hex')}`;
  await mkdir(next, { mode: 0o755 });
  for (const f of files) {
    const target = join(next, f.path);
    await mkdir(dirname(target), { recursive: true, mode: 0o755 });
    await writeFile(target, f.data, { mode: 0o644 });
  }
  const old = `${filesDir}.old-${randomBytes(4).toString('hex')}`;
  await rename(filesDir, old).catch(() => undefined);
  await rename(next, filesDir);
  await rm(old, { recursive: true, force: true });
}
