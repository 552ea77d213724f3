/**
 * One writer process for test/store-concurrency.test.ts.
 *
 *   node --import tsx test/helpers/store-writer.ts <db file or postgres:// URL> <writerId> [messages=1000] [ownSessions=3]
 *
 * Opens the store, creates its sessions (plus one key shared by every writer), prints a `ready` line, waits for
 * `go` on stdin so all writers start together, then appends one message per transaction, cycling over its
 * sessions. Prints a `done` JSON line and exits 0; on any error prints it and exits 1.
 */
import { pathToFileURL } from 'node:url';
import { SessionStore } from '../../packages/agent-core/src/store/index.js';

export const SHARED_KEY = 'agent:main:cli:group:shared';

export function ownKey(writerId: string, index: number): string {
  return `agent:main:cli:dm:writer-${writerId}-${index}`;
}

export function messageText(writerId: string, n: number): string {
  return `writer ${writerId} message ${n}`;
}

function waitForGo(): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.includes('go\n')) {
        process.stdin.pause();
        resolve();
      }
    });
    process.stdin.on('end', () => reject(new Error('stdin closed before "go"')));
  });
}

async function main(): Promise<void> {
  const [dbPath, writerId, countArg = '1000', sessionsArg = '3'] = process.argv.slice(2);
  if (!dbPath || !writerId) throw new Error('usage: store-writer.ts <db> <writerId> [messages] [ownSessions]');
  const count = Number(countArg);
  const ownSessions = Number(sessionsArg);

  const store = await SessionStore.open(dbPath);
  const sessionIds: string[] = [];
  for (let i = 0; i < ownSessions; i++) {
    sessionIds.push((await store.getOrCreateSession(ownKey(writerId, i), { source: 'cli', userId: writerId })).session.id);
  }
  sessionIds.push((await store.getOrCreateSession(SHARED_KEY, { source: 'cli' })).session.id);
  process.stdout.write(`${JSON.stringify({ ready: true, writerId })}\n`);

  await waitForGo();
  for (let n = 0; n < count; n++) {
    const sessionId = sessionIds[n % sessionIds.length];
    await store.appendMessages(sessionId, [{ role: 'user', content: messageText(writerId, n) }]);
  }
  const stats = store.writeStats();
  await store.close();
  process.stdout.write(`${JSON.stringify({ done: true, writerId, written: count, sessionIds, ...stats })}\n`);
}

// Only when run as a script: the test imports the naming helpers above.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`writer failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
