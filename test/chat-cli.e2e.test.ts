/**
 * `npx herald chat` (issue 53 M7) as a person uses it: the real CLI process, its standard input typed a line at a
 * time, its standard output read as the reply streams in, against the OpenAI stand-in and a temp SQLite store. A
 * new chat is a `cli` session; `--resume <id>` goes on with the stored history.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionStore } from '@herald/agent-core';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';
import { HERALD_BIN } from './helpers/cli.js';
import { isolatedEnv } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'herald-chat-'));
const db = join(dir, 'herald.db');
let llm: FakeLLM;

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: 'sk-chat' });
  llm.respondWith((req) => ({ text: `echo of ${lastUserText(req)}, streamed in several parts` }));
});
afterAll(async () => {
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Chat {
  proc: ChildProcessWithoutNullStreams;
  out: () => string;
  exited: Promise<number | null>;
}

function chat(args: string[]): Chat {
  const env = isolatedEnv({ HERALD_DB: db, HERALD_MODEL: 'openai:gpt-4.1-mini', OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'sk-chat' });
  const proc = spawn(process.execPath, [HERALD_BIN, 'chat', ...args], { cwd: dir, env });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
  proc.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, out: () => `${stdout}${stderr ? `\n[stderr] ${stderr}` : ''}`, exited };
}

const userTexts = (r: RecordedRequest): string[] =>
  ((r.body.messages ?? []) as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').map((m) => String(m.content));

describe('herald chat', () => {
  let sessionId = '';

  it('a new chat: each typed line gets the streamed answer, in one cli session of the store', { timeout: 300_000 }, async () => {
    const c = chat([]);
    await waitFor(() => /New conversation \S+/.test(c.out()), { timeoutMs: 90_000, what: `the chat to start: ${c.out()}` });
    c.proc.stdin.write('first question\n');
    await waitFor(() => c.out().includes('echo of first question, streamed in several parts\n'), { timeoutMs: 60_000, what: 'the first answer' });
    c.proc.stdin.write('second question\n');
    await waitFor(() => c.out().includes('echo of second question'), { timeoutMs: 60_000, what: 'the second answer' });
    c.proc.stdin.write('/exit\n');
    expect(await c.exited).toBe(0);
    sessionId = /New conversation (\S+)/.exec(c.out())?.[1] ?? '';
    // The second request carried the first exchange: the same conversation.
    expect(userTexts(llm.requests.at(-1) as RecordedRequest)).toEqual(['first question', 'second question']);
    const store = await SessionStore.open(db);
    try {
      expect(await store.getSession(sessionId)).toMatchObject({ source: 'cli', messageCount: 4 });
      expect((await store.getHistory(sessionId)).map((m) => m.content)).toEqual([
        'first question',
        'echo of first question, streamed in several parts',
        'second question',
        'echo of second question, streamed in several parts',
      ]);
    } finally {
      await store.close();
    }
  });

  it('--resume goes on with the stored conversation; an unknown id is refused', { timeout: 300_000 }, async () => {
    const c = chat(['--resume', sessionId]);
    await waitFor(() => c.out().includes(`Resumed conversation ${sessionId} (4 messages)`), { timeoutMs: 90_000, what: `the resume: ${c.out()}` });
    c.proc.stdin.end('third question\n');
    expect(await c.exited).toBe(0);
    expect(c.out()).toContain('echo of third question');
    expect(userTexts(llm.requests.at(-1) as RecordedRequest)).toEqual(['first question', 'second question', 'third question']);

    const unknown = chat(['--resume', 'no-such-session']);
    unknown.proc.stdin.end();
    expect(await unknown.exited).toBe(2);
    expect(unknown.out()).toContain('no session "no-such-session"');
  });
});
