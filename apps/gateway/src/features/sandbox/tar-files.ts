/**
 * The files a run left in its work dir, read from the tar the sandbox streams out. The tar is the sandboxed
 * program's to write (it can reach the channel), so nothing in it is trusted: only regular files are taken, under
 * clean relative paths, up to a count and a total size; links, devices and `..` paths are dropped.
 */
import { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import type { WorkFile } from './types.js';

export const MAX_WORK_FILES = 1000;

/** `./a/b.csv` → `a/b.csv`; null for anything that could leave the work dir or is not a plain name. */
export function cleanWorkPath(raw: string): string | null {
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.some((p) => p === '..' || p.includes('\0'))) return null;
  return parts.join('/');
}

export interface ReadFilesLimits {
  maxFiles: number;
  maxTotalBytes: number;
}

export async function filesFromTar(tar: Buffer, limits: ReadFilesLimits): Promise<WorkFile[]> {
  const files: WorkFile[] = [];
  let total = 0;
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        const path = cleanWorkPath(header.name);
        const data = Buffer.concat(chunks);
        if (header.type === 'file' && path !== null && files.length < limits.maxFiles && total + data.length <= limits.maxTotalBytes) {
          files.push({ path, data });
          total += data.length;
        }
        next();
      });
      stream.on('error', reject);
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  Readable.from([tar]).pipe(ex);
  await done;
  return files;
}
