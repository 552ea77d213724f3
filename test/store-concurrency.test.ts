/**
 * Acceptance: four real processes hammer one store at once (one message per transaction) and nothing is lost,
 * reordered or reported as an error: a SQLite file, and a PostgreSQL database. They also open the fresh store
 * together, so the migrations race too.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionStore } from '../packages/agent-core/src/store/index.js';
import { STORE_BACKENDS, useTempStores } from '../packages/agent-core/src/store/test-support.js';
import { SHARED_KEY, messageText, ownKey } from './helpers/store-writer.js';

const WRITERS = 4;
const MESSAGES_PER_WRITER = 1000;
const OWN_SESSIONS = 3;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WRITER_SCRIPT = path.join('test', 'helpers', 'store-writer.ts');

interface WriterResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Writer {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  exited: Promise<WriterResult>;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-store-concurrency-'));
const children: ChildProcessWithoutNullStreams[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

function startWriter(dbPath: string, writerId: string): Writer {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER_SCRIPT, dbPath, writerId, String(MESSAGES_PER_WRITER), String(OWN_SESSIONS)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<WriterResult>((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const ready = new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (stdout.includes('"ready":true')) resolve();
    };
    child.stdout.on('data', check);
    void exited.then((r) => reject(new Error(`writer ${writerId} exited before ready (${r.code}): ${r.stderr}`)));
  });
  return { child, ready, exited };
}

/** n of each "writer W message n" in the order given, per writer. */
function sequenceByWriter(contents: (string | null)[]): Map<string, number[]> {
  const byWriter = new Map<string, number[]>();
  for (const content of contents) {
    const match = /^writer (\d+) message (\d+)$/.exec(content ?? '');
    if (!match) throw new Error(`unexpected message: ${content}`);
    const list = byWriter.get(match[1]) ?? [];
    list.push(Number(match[2]));
    byWriter.set(match[1], list);
  }
  return byWriter;
}

describe.each(STORE_BACKENDS)('four processes writing one %s store at once', (backend) => {
  const temp = useTempStores(backend);

  it('keeps all 4,000 messages, in order per session, and no writer sees an error', async () => {
    const dbPath = backend === 'sqlite' ? path.join(tmp, 'data', 'herald.db') : await temp.location();
    const writers = Array.from({ length: WRITERS }, (_, i) => startWriter(dbPath, String(i)));
    await Promise.all(writers.map((w) => w.ready));
    // Released together so the writes really overlap instead of running one process after another.
    for (const w of writers) w.child.stdin.end('go\n');
    const results = await Promise.all(writers.map((w) => w.exited));

    for (const r of results) {
      expect(r.stderr).not.toMatch(/SQLITE_BUSY|SQLITE_LOCKED|deadlock|writer failed/);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"done":true');
    }

    const store = await SessionStore.open(dbPath);
    try {
      expect((await store.listSessions({ limit: 200 })).sessions).toHaveLength(WRITERS * OWN_SESSIONS + 1);
      let total = 0;
      for (let w = 0; w < WRITERS; w++) {
        const writerId = String(w);
        for (let i = 0; i < OWN_SESSIONS; i++) {
          const session = await store.currentSession(ownKey(writerId, i));
          expect(session).not.toBeNull();
          const contents = (await store.getMessages(session!.id)).map((m) => m.content);
          // Writer w sent message n to session n % (OWN_SESSIONS + 1): exactly those, in that order.
          const expected: string[] = [];
          for (let n = i; n < MESSAGES_PER_WRITER; n += OWN_SESSIONS + 1) expected.push(messageText(writerId, n));
          expect(contents).toEqual(expected);
          expect(session!.messageCount).toBe(expected.length);
          total += contents.length;
        }
      }

      // Every writer created the shared key's session at the same moment: they must all have got one session.
      const shared = (await store.currentSession(SHARED_KEY))!;
      const sharedContents = (await store.getMessages(shared.id)).map((m) => m.content);
      expect(shared.messageCount).toBe(sharedContents.length);
      const perWriter = sequenceByWriter(sharedContents);
      expect([...perWriter.keys()].sort()).toEqual(['0', '1', '2', '3']);
      for (const [, ns] of perWriter) {
        const expected: number[] = [];
        for (let n = OWN_SESSIONS; n < MESSAGES_PER_WRITER; n += OWN_SESSIONS + 1) expected.push(n);
        expect(ns).toEqual(expected);
      }
      total += sharedContents.length;
      expect(total).toBe(WRITERS * MESSAGES_PER_WRITER);

      // The writers interleaved in the shared session (run back to back they would switch only 3 times).
      let switches = 0;
      for (let i = 1; i < sharedContents.length; i++) {
        if (sharedContents[i]!.split(' ')[1] !== sharedContents[i - 1]!.split(' ')[1]) switches++;
      }
      expect(switches).toBeGreaterThan(WRITERS - 1);

      expect(await store.search('"writer 2 message 999"', { source: 'cli' })).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
