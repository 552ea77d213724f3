/**
 * Skills in a folder on disk: one subfolder per skill with its SKILL.md and any files beside it. Read-only here:
 * the agent's own skills go to the store (store.ts). A folder that does not follow the format is skipped with
 * the reason (the caller logs it), never fatal.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SKILL_FILE, parseSkill, type SkillDoc } from './skill-file.js';

/** Files beside SKILL.md larger than this are not read into the conversation. */
const SKILL_FILE_MAX_BYTES = 256 * 1024;

export interface DiskSkill extends SkillDoc {
  /** The skill's folder (absolute). */
  dir: string;
}

export interface DiskScan {
  skills: DiskSkill[];
  /** Folders skipped, with why. */
  skipped: { dir: string; reason: string }[];
}

/** The skills under `root`, by name; a missing root is an empty list. */
export async function scanSkillDir(root: string): Promise<DiskScan> {
  const out: DiskScan = { skills: [], skipped: [] };
  let entries: string[];
  try {
    entries = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  for (const folder of entries.sort()) {
    const dir = resolve(root, folder);
    try {
      const text = await readFile(join(dir, SKILL_FILE), 'utf8');
      out.skills.push({ ...parseSkill(text, folder), dir });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      out.skipped.push({ dir, reason: code === 'ENOENT' ? `no ${SKILL_FILE}` : (err as Error).message });
    }
  }
  return out;
}

/** The files of a skill's folder besides SKILL.md, as relative paths (two levels deep at most). */
export async function skillFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (at: string, depth: number): Promise<void> => {
    for (const e of await readdir(at, { withFileTypes: true })) {
      const path = join(at, e.name);
      if (e.isDirectory() && depth < 2) await walk(path, depth + 1);
      else if (e.isFile() && !(depth === 0 && e.name === SKILL_FILE)) found.push(relative(dir, path).split(sep).join('/'));
    }
  };
  await walk(dir, 0);
  return found.sort();
}

/** Reads `file` of the skill in `dir`: only inside that folder (no `..`, no absolute path, no symlink out of it). */
export async function readSkillFile(dir: string, file: string): Promise<string> {
  if (file === '' || isAbsolute(file) || file.split(/[\\/]/).includes('..')) throw new Error(`"${file}" is not a path inside the skill`);
  const root = await realpath(dir);
  const target = await realpath(resolve(root, file)).catch(() => {
    throw new Error(`the skill has no file "${file}"`);
  });
  if (!target.startsWith(root + sep)) throw new Error(`"${file}" is not a path inside the skill`);
  const info = await stat(target);
  if (!info.isFile()) throw new Error(`"${file}" is not a file`);
  if (info.size > SKILL_FILE_MAX_BYTES) throw new Error(`"${file}" has ${info.size} bytes; files over ${SKILL_FILE_MAX_BYTES} bytes are not read`);
  return readFile(target, 'utf8');
}
