/**
 * The context-files layer: a profile's files (AGENTS.md, SOUL.md, a project's notes) read when a session starts.
 * An entry is a file, or a folder whose Markdown files (*.md, by name) are read. The text of all files together is
 * capped (HERALD_CONTEXT_FILES_MAX_CHARS): a file that does not fit is cut, with a warning in the log and a line in
 * the prompt itself, so neither the operator nor the model mistakes a cut file for the whole.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

interface ContextFileInfo {
  path: string;
  /** Characters of the file. */
  chars: number;
  /** Characters that went into the prompt (less than chars when cut). */
  used: number;
}

export interface ContextFiles {
  /** The layer's text, or null when no file had any text. */
  text: string | null;
  files: ContextFileInfo[];
  /** Missing or unreadable entries and cut files, one sentence each. */
  warnings: string[];
}

/** The files an entry stands for: itself, or a folder's *.md files by name. */
async function expand(entry: string): Promise<string[]> {
  const path = resolve(entry);
  const info = await stat(path);
  if (!info.isDirectory()) return [path];
  const names = (await readdir(path, { withFileTypes: true })).filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.md')).map((e) => e.name);
  return names.sort().map((n) => join(path, n));
}

export async function readContextFiles(entries: readonly string[], maxChars: number): Promise<ContextFiles> {
  const out: ContextFiles = { text: null, files: [], warnings: [] };
  const sections: string[] = [];
  let left = maxChars;
  for (const entry of entries) {
    let paths: string[];
    try {
      paths = await expand(entry);
    } catch (err) {
      out.warnings.push(`context file ${entry} not read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue;
    }
    for (const path of paths) {
      const text = (await readFile(path, 'utf8')).trim();
      if (text === '') continue;
      const used = Math.min(text.length, Math.max(left, 0));
      out.files.push({ path, chars: text.length, used });
      if (used < text.length) {
        const warning = `context file ${path} cut: ${used} of ${text.length} characters fit (HERALD_CONTEXT_FILES_MAX_CHARS=${maxChars})`;
        out.warnings.push(warning);
        sections.push(`## ${basename(path)}\n${text.slice(0, used)}\n[… ${warning}]`);
      } else sections.push(`## ${basename(path)}\n${text}`);
      left -= used;
    }
  }
  if (sections.length > 0) out.text = sections.join('\n\n');
  return out;
}
