/** The files channel is the sandboxed program's to write: a forged tar must not place anything outside the work dir. */
import { describe, expect, it } from 'vitest';
import { pack } from 'tar-stream';
import { cleanWorkPath, filesFromTar } from './tar-files.js';

async function tarOf(entries: Array<{ name: string; type?: 'file' | 'symlink' | 'link'; linkname?: string; data?: string }>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => p.on('end', () => resolve()));
  for (const e of entries) p.entry({ name: e.name, type: e.type ?? 'file', linkname: e.linkname }, e.data ?? '');
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

describe('reading the files a run left', () => {
  it('keeps plain files under clean relative paths and drops ../, links and what is over the limits', async () => {
    const tar = await tarOf([
      { name: './report.csv', data: 'a,b' },
      { name: '../../../etc/cron.d/evil', data: 'x' },
      { name: 'a/../../escape', data: 'x' },
      { name: '/abs/inside.txt', data: 'kept under the work dir' },
      { name: 'link', type: 'symlink', linkname: '/etc/passwd' },
      { name: 'hard', type: 'link', linkname: '/etc/shadow' },
      { name: 'big.bin', data: 'y'.repeat(100) },
    ]);
    const files = await filesFromTar(tar, { maxFiles: 10, maxTotalBytes: 50 });
    expect(files.map((f) => [f.path, f.data.toString()])).toEqual([
      ['report.csv', 'a,b'],
      ['abs/inside.txt', 'kept under the work dir'],
    ]);
    expect(await filesFromTar(tar, { maxFiles: 1, maxTotalBytes: 1000 })).toHaveLength(1);
  });

  it('never makes a path with .. or an empty name', () => {
    expect(cleanWorkPath('..')).toBeNull();
    expect(cleanWorkPath('./')).toBeNull();
    expect(cleanWorkPath('x/../../y')).toBeNull();
    expect(cleanWorkPath('//x//y')).toBe('x/y');
  });
});
