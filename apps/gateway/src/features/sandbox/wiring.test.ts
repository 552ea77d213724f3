/**
 * execute_code as a worker offers it (wiring.ts): the start-up choice and its log line, and each turn's tool on real
 * bubblewrap — the session's own work dir, the files of the turn's messages in inputs/, the files the code writes
 * handed to the reply's FileSink. The platform downloads are an in-memory PlatformFiles (Herald's own interface).
 */
import type { FileSink, NewTurnFile, ToolContext } from '@herald/agent-core';
import type { Attachment, PlatformFiles } from '@herald/adapters';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../support/logger.js';
import type { SandboxConfig } from './config.js';
import { sandboxRoot } from './test-support.js';
import { CODE_TURN_CONTEXT, createCodeTools, offersCode, openSandbox, type CodeTurn } from './wiring.js';

const root = sandboxRoot();

function config(backend: SandboxConfig['sandboxBackend']): SandboxConfig {
  return {
    sandboxBackend: backend,
    sandboxDir: root.path,
    sandboxImage: 'python:3.12-slim',
    sandboxTimeoutS: 20,
    sandboxCpuS: 10,
    sandboxMemoryMb: 1024,
    sandboxProcesses: 32,
    sandboxDiskMb: 16,
    sandboxOutputKb: 64,
    sandboxNetwork: false,
  };
}

function capturedLog() {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = createLogger({ destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  return { log, lines };
}

/** Files a platform holds, by url; each download is counted. */
function platformFiles(files: Record<string, string>): PlatformFiles & { downloads: string[] } {
  const downloads: string[] = [];
  return {
    platform: 'telegram',
    downloads,
    async download(att: Attachment) {
      downloads.push(att.url);
      const body = files[att.url];
      if (body === undefined) throw new Error('gone');
      return { bytes: Buffer.from(body) };
    },
  };
}

function sink(): FileSink & { files: NewTurnFile[] } {
  const files: NewTurnFile[] = [];
  return { files, add: (f) => void files.push(f) };
}

const ctx = (files: FileSink): ToolContext => ({ signal: new AbortController().signal, files }) as unknown as ToolContext;

describe('execute_code in a worker', () => {
  it('is offered by the code toolset and by full only', () => {
    expect(offersCode(['core', 'schedule', 'code'])).toBe(true);
    expect(offersCode(['full'])).toBe(true);
    expect(offersCode(['core', 'schedule'])).toBe(false);
  });

  it('looks for no backend when no profile offers code, and says so', async () => {
    const { log, lines } = capturedLog();
    expect(await openSandbox(config('auto'), [['core'], ['research']], log)).toBeNull();
    expect(lines.map((l) => l.msg)).toEqual(["execute_code not offered: no profile's toolsets include code (HERALD_TOOLSETS)"]);
  });

  it('without a backend: one warning with the reason, and no tool', async () => {
    const { log, lines } = capturedLog();
    const detection = await openSandbox(config('off'), [['core', 'code']], log);
    expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'execute_code not offered: HERALD_SANDBOX_BACKEND=off' })]);
    const tools = createCodeTools({
      detection,
      config: config('off'),
      fileLimits: { maxBytes: 1024 * 1024, types: ['text/*', 'image/*'] },
      inputLimits: { maxFileBytes: 1024, maxTotalBytes: 1024 },
      files: () => platformFiles({}),
    });
    expect(tools).toBeNull();
  });

  it("each turn's tool runs in its session's work dir, reads the turn's files and sends what the code writes", async () => {
    const { log, lines } = capturedLog();
    const detection = await openSandbox(config('bubblewrap'), [['core', 'code']], log);
    expect(lines[0]).toMatchObject({ level: 30, msg: expect.stringMatching(/^execute_code runs code in bubblewrap/) });
    const platform = platformFiles({ 'tg-file:1': 'a,b\n1,2\n', 'tg-file:2': 'second message' });
    const tools = createCodeTools({
      detection,
      config: config('bubblewrap'),
      fileLimits: { maxBytes: 1024 * 1024, types: ['text/*', 'image/*'] },
      inputLimits: { maxFileBytes: 1024, maxTotalBytes: 4096 },
      files: () => platform,
    });
    // A turn's calls: the one tool, with the session and the turn's messages in the tool context (turn/tools.ts).
    const turn = (sessionId: string, messages: CodeTurn['messages'] = []) => {
      const codeTurn: CodeTurn = { messages };
      return {
        execute: (args: Record<string, unknown>, c: ToolContext) => tools!.tool.execute(args, { ...c, sessionId, [CODE_TURN_CONTEXT]: codeTurn }),
      };
    };

    // Two messages merged into one turn: both files are there, under their names (or a made-up one).
    const first = turn('session-1', [
      { platform: 'telegram', attachments: [{ kind: 'file', url: 'tg-file:1', name: 'data.csv', mimeType: 'text/csv' }] },
      { platform: 'telegram', attachments: [{ kind: 'file', url: 'tg-file:2', mimeType: 'text/plain' }] },
    ]);
    const files = sink();
    const out = await first.execute(
      { language: 'python', code: "import os\nprint(sorted(os.listdir('inputs')))\nopen('sum.txt','w').write(open('inputs/data.csv').read().upper())" },
      ctx(files),
    );
    expect(out).toMatch(/^Exit code 0/);
    expect(out).toContain("['data.csv', 'file-2.txt']");
    expect(files.files.map((f) => [f.name, f.data.toString()])).toEqual([['sum.txt', 'A,B\n1,2\n']]);
    // Fetched once, when code first ran: a second run in the same turn fetches nothing.
    expect(platform.downloads).toEqual(['tg-file:1', 'tg-file:2']);
    expect(await first.execute({ language: 'shell', code: 'ls inputs | wc -l' }, ctx(sink()))).toContain('2');
    expect(platform.downloads).toEqual(['tg-file:1', 'tg-file:2']);

    // The next turn of the same session finds the file; another session does not; no files fetched for either.
    const again = await turn('session-1').execute({ language: 'shell', code: 'cat sum.txt; ls inputs | wc -l' }, ctx(sink()));
    expect(again).toContain('A,B\n1,2\n0');
    const other = await turn('session-2').execute({ language: 'shell', code: 'cat sum.txt' }, ctx(sink()));
    expect(other).toMatch(/^Exit code 1/);
    expect(platform.downloads).toHaveLength(2);
  });
});
