import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { UNCAUGHT_EXCEPTION_LOG, UNHANDLED_REJECTION_LOG, watchProcessFailures } from './process-failures.js';

function logLines(): { log: ReturnType<typeof createLogger>; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const log = createLogger({ destination });
  return {
    log,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('errors nothing caught', () => {
  it('an unhandled rejection is logged under its own message and the process goes on', () => {
    const { log, lines } = logLines();
    const proc = new EventEmitter();
    const exits: number[] = [];
    watchProcessFailures(log, proc, (code) => exits.push(code));
    proc.emit('unhandledRejection', new TypeError("Cannot read properties of null (reading 'id')"));
    expect(lines()).toEqual([expect.objectContaining({ level: 50, msg: UNHANDLED_REJECTION_LOG, err: expect.objectContaining({ type: 'TypeError' }) })]);
    expect(exits).toEqual([]);
  });

  it('an uncaught exception is logged as fatal, then the process exits with 1', async () => {
    const { log, lines } = logLines();
    const proc = new EventEmitter();
    let exited: (code: number) => void = () => undefined;
    const exit = new Promise<number>((resolve) => (exited = resolve));
    watchProcessFailures(log, proc, exited);
    proc.emit('uncaughtException', new Error('boom'));
    expect(await exit).toBe(1);
    expect(lines()).toEqual([expect.objectContaining({ level: 60, msg: UNCAUGHT_EXCEPTION_LOG, err: expect.objectContaining({ message: 'boom' }) })]);
  });
});
