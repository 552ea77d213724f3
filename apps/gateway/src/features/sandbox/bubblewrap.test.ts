/**
 * execute_code on real bubblewrap: Python, Node and bash run; the user's files are readable; the files a run
 * writes come back (and stay for the next run of the same conversation); a PNG reaches the reply as a picture.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_OUTBOUND_FILE_LIMITS, type NewTurnFile } from '@herald/agent-core';
import type { Attachment, PlatformFiles } from '@herald/adapters';
import { turnInputFiles } from './inputs.js';
import { createExecuteCodeTool } from './tool.js';
import { sessionWorkDir } from './work-dir.js';
import { TEST_LIMITS, bubblewrap, runner, sandboxRoot } from './test-support.js';

const root = sandboxRoot();
const backend = bubblewrap();
const run = runner(backend, root);

const PNG_PROGRAM = `
import zlib, struct
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
w, h = 8, 8
rows = b''.join(b'\\x00' + b'\\x20\\x80\\xff' * w for _ in range(h))
png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b'')
open('chart.png', 'wb').write(png)
print('wrote chart.png')
`;

describe('execute_code on bubblewrap', () => {
  it('runs Python, JavaScript and bash and returns what they print and their exit code', async () => {
    const py = await run('python', 'import sys\nprint(sum(range(10)))\nprint("warn", file=sys.stderr)\nsys.exit(3)');
    expect(py).toMatchObject({ exitCode: 3, stdout: '45\n', stderr: 'warn\n', timedOut: false, outputCapped: false });
    const js = await run('javascript', 'console.log([1, 2, 3].map((n) => n * 2).join(","))');
    expect(js).toMatchObject({ exitCode: 0, stdout: '2,4,6\n' });
    const sh = await run('shell', 'echo "$((6 * 7))"; pwd');
    expect(sh).toMatchObject({ exitCode: 0, stdout: '42\n/work\n' });
  });

  it('keeps what a program printed before it was killed at the time limit', async () => {
    const r = await run('python', "import time\nprint('working on it')\ntime.sleep(1000)", { limits: { wallMs: 1_500 } });
    expect(r).toMatchObject({ timedOut: true, exitCode: null, stdout: 'working on it\n' });
  });

  it("lets the code read the user's files from inputs/ but not change them", async () => {
    const r = await run('python', "print(open('inputs/data.csv').read().strip())\nopen('inputs/data.csv', 'w')", {
      session: 'inputs',
      inputFiles: [{ name: 'data.csv', data: Buffer.from('a,b\n1,2\n') }],
    });
    expect(r.stdout).toBe('a,b\n1,2\n');
    expect(r.stderr).toMatch(/Read-only file system/);
  });

  it("fetches the turn's files through the platform, once, when the agent first runs code", async () => {
    let downloads = 0;
    const files: PlatformFiles = {
      platform: 'telegram',
      async download(att) {
        downloads += 1;
        if (att.url === 'tg-file:gone') throw new Error('file is gone');
        return { bytes: Buffer.from(`bytes of ${att.url}`) };
      },
    };
    const attachments: Attachment[] = [
      { kind: 'image', url: 'tg-file:photo', mimeType: 'image/jpeg' },
      { kind: 'file', url: 'tg-file:gone', name: 'lost.pdf' },
      { kind: 'file', url: 'tg-file:doc', name: 'report.csv' },
    ];
    let fetched: ReturnType<typeof turnInputFiles> | undefined;
    const tool = createExecuteCodeTool({
      backend,
      workDir: sessionWorkDir(root.path, 'turn-files'),
      limits: TEST_LIMITS,
      fileLimits: DEFAULT_OUTBOUND_FILE_LIMITS,
      // The turn's files, fetched when code first runs and kept for the turn (as wiring.ts keeps them per turn).
      inputFiles: () => (fetched ??= turnInputFiles(attachments, files, { maxFileBytes: 1024, maxTotalBytes: 4096 }, new AbortController().signal)),
    });
    const ctx = { signal: new AbortController().signal };
    const listed = await tool.execute({ language: 'shell', code: 'cd inputs && for f in *; do echo "$f: $(cat "$f")"; done' }, ctx);
    expect(listed).toContain('image-1.jpg: bytes of tg-file:photo\nreport.csv: bytes of tg-file:doc\n');
    await tool.execute({ language: 'shell', code: 'ls inputs' }, ctx);
    expect(downloads).toBe(3);
  });

  it('returns the files a run writes and keeps them for the next run of the same conversation only', async () => {
    const first = await run('shell', 'mkdir -p out && echo "x,y" > out/table.csv && echo kept > notes.txt', { session: 'keep' });
    expect(first.files.map((f) => f.path).sort()).toEqual(['notes.txt', 'out/table.csv']);
    const second = await run('shell', 'cat notes.txt out/table.csv && echo more >> notes.txt', { session: 'keep' });
    expect(second.stdout).toBe('kept\nx,y\n');
    // Only what changed comes back again.
    expect(second.files.map((f) => [f.path, f.data.toString()])).toEqual([['notes.txt', 'kept\nmore\n']]);
    const elsewhere = await run('shell', 'ls', { session: 'another' });
    expect(elsewhere.stdout).toBe('inputs\n');
  });

  it('sends the PNG a Python program writes to the chat as a picture', async () => {
    const sent: NewTurnFile[] = [];
    const tool = createExecuteCodeTool({ backend, workDir: sessionWorkDir(root.path, 'chart'), limits: TEST_LIMITS, fileLimits: DEFAULT_OUTBOUND_FILE_LIMITS });
    const result = await tool.execute(
      { language: 'python', code: PNG_PROGRAM },
      { signal: new AbortController().signal, files: { add: (f: NewTurnFile) => sent.push(f) } },
    );
    expect(result).toMatch(/Exit code 0/);
    expect(result).toMatch(/Sent to the user after your reply: chart\.png \(image\/png/);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ kind: 'image', name: 'chart.png', mimeType: 'image/png' });
    expect(sent[0].data.subarray(1, 4).toString()).toBe('PNG');
  });

  it('with the network allowed, shares the host network, Redis on the loopback included (docs/sandbox.md warns)', async () => {
    const code = "import socket\nsocket.create_connection(('127.0.0.1', 6379), timeout=3).close()\nprint('reached redis')";
    expect((await run('python', code, { limits: { network: true } })).stdout).toBe('reached redis\n');
    expect((await run('python', code)).stderr).toMatch(/ConnectionRefusedError/);
  });

  it('tells the model what was not sent, and refuses a language it does not know', async () => {
    const tool = createExecuteCodeTool({
      backend,
      workDir: sessionWorkDir(root.path, 'refused'),
      limits: TEST_LIMITS,
      fileLimits: { maxBytes: 1024, types: ['image/*'] },
    });
    const ctx = { signal: new AbortController().signal, files: { add: () => undefined } };
    const result = await tool.execute({ language: 'shell', code: 'echo hello > hello.txt' }, ctx);
    expect(result).toMatch(/Not sent: hello\.txt: files of type text\/plain may not be sent/);
    await expect(tool.execute({ language: 'ruby', code: 'puts 1' }, ctx)).rejects.toThrow(/"language" must be one of python, javascript, shell/);
  });
});
