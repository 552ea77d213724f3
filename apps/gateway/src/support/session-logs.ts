/**
 * Per-session log files (N3, HERALD_SESSION_LOG_DIR): besides the process's own output, every log line about a
 * conversation — one that carries its `sessionKey` (the router's and the worker's turn loggers bind it) — is
 * appended to `<dir>/<session key>.log`, one file per conversation across its /new and compressions (the key stays,
 * the session id moves on). The lines are the same JSON the process writes, secrets already scrubbed. A pino
 * destination: files open on first use and the least recently used close past MAX_OPEN_FILES; writes are
 * synchronous like the process's own output, so nothing is lost when the process exits right after a line.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Open files kept at most; a busy deployment with more conversations than this reopens (appends) as needed. */
const MAX_OPEN_FILES = 64;
const SESSION_KEY_FIELD = /"sessionKey":"((?:[^"\\]|\\.)*)"/;

/** A session key as a file name: `agent:main:telegram:dm:42` → `agent_main_telegram_dm_42.log`. */
export function sessionLogFile(sessionKey: string): string {
  return `${sessionKey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200)}.log`;
}

export class SessionLogFiles {
  /** File name → descriptor, least recently used first. */
  private readonly open = new Map<string, number>();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** pino's destination contract: one serialised line at a time. */
  write(line: string): void {
    const match = SESSION_KEY_FIELD.exec(line);
    if (!match) return;
    try {
      writeSync(this.fileFor(JSON.parse(`"${match[1]}"`) as string), line);
    } catch {
      // A full disk or a removed directory loses session log lines, never the process (its own output has them).
    }
  }

  private fileFor(key: string): number {
    const name = sessionLogFile(key);
    let fd = this.open.get(name);
    if (fd !== undefined) {
      this.open.delete(name);
    } else {
      fd = openSync(join(this.dir, name), 'a');
      if (this.open.size >= MAX_OPEN_FILES) {
        const [oldest, oldestFd] = this.open.entries().next().value as [string, number];
        this.open.delete(oldest);
        closeSync(oldestFd);
      }
    }
    this.open.set(name, fd);
    return fd;
  }
}
