/**
 * HERALD_SESSION_LOG_DIR: the root logger writes each conversation's lines to a file of its own as well, scrubbed
 * like the process's output; lines about no conversation stay out of them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { sessionLogFile } from './session-logs.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('per-session log files', () => {
  it("puts each conversation's lines in its own file, secrets scrubbed, and keeps the process output whole", () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-session-logs-'));
    dirs.push(dir);
    const out: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        out.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ level: 'info', secrets: ['sk-secret-123'], sessionLogDir: join(dir, 'sessions'), destination });
    log.info('starting');
    const ana = log.child({ sessionKey: 'agent:main:telegram:dm:42', jobId: 'j1' });
    ana.info({ model: 'gpt' }, 'turn started');
    log.child({ sessionKey: 'agent:main:slack:dm:U7' }).warn('called with sk-secret-123');
    ana.info('turn finished');

    expect(readdirSync(join(dir, 'sessions')).sort()).toEqual([sessionLogFile('agent:main:slack:dm:U7'), 'agent_main_telegram_dm_42.log'].sort());
    const anaLines = readFileSync(join(dir, 'sessions', 'agent_main_telegram_dm_42.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string });
    expect(anaLines.map((l) => l.msg)).toEqual(['turn started', 'turn finished']);
    const slack = readFileSync(join(dir, 'sessions', sessionLogFile('agent:main:slack:dm:U7')), 'utf8');
    expect(slack).toContain('called with');
    expect(slack).not.toContain('sk-secret-123');
    // The process's own output has every line.
    expect(out.join('').trim().split('\n')).toHaveLength(4);
  });
});
