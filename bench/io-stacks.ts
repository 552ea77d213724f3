/**
 * The chain of calls a message travels through (issue 46's "crosses N files, hop by hop"): the stacks at the moments
 * Herald's code does I/O, for bench/message-path.ts.
 *
 * Every place where the path leaves the process is hooked in this process: a Redis command (ioredis
 * `sendCommand`, which BullMQ's calls go through too), an HTTP request (node:http and node:https `request`: the Bot
 * API client and the model provider's transport), a SQLite statement (better-sqlite3's run / get / all / iterate
 * and `exec`). At each, the stack is taken with V8's async frames (`at async f`), so it holds the functions that
 * are still running or awaiting on the way to that I/O: the hops that carried the message there. A helper that was
 * asked something and returned before (a row converted, a shape checked, a price looked up) is on no such stack.
 * Hooks only observe: the call goes on unchanged.
 */
import { createHook, executionAsyncId } from 'node:async_hooks';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import http from 'node:http';
import https from 'node:https';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

/** Herald's files (relative to the repository, TypeScript source paths) → the functions of theirs on an I/O stack. */
export type Frames = Map<string, Set<string>>;

export interface IoStacks {
  /** The frames recorded since the last take; recording goes on. */
  take(): Frames;
}

/** Herald's own code: the gateway and the workspace packages, compiled or from source. */
export const HERALD_FILE = /^(apps|packages)\/[^/]+\/(src|dist)\//;
/** The TypeScript file a compiled one comes from (the paths the architecture doc names). */
export const sourceOf = (file: string): string => file.replace(/\/dist\//, '/src/').replace(/\.js$/, '.ts');
/** `    at [async] name (url:line:col)` or `    at [async] url:line:col`. */
const FRAME = /^\s*at (?:async )?(?:(.+?) \()?((?:file:\/\/|\/)[^)]+?):\d+:\d+\)?$/;

/** Hooks the I/O entry points; `root` is the repository, to name files relative to it. */
export function recordIoStacks(root: string): IoStacks {
  let frames: Frames = new Map();
  /**
   * Async resources made since the last take: the context that made each, and where it was made. V8 writes an
   * error's stack out only when it is read, so the stacks of the many resources that lead to no I/O cost a capture.
   */
  let made = new Map<number, { by: number; where: Error }>();
  const here = (): Error => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = Number.POSITIVE_INFINITY;
    const where = new Error('io');
    Error.stackTraceLimit = limit;
    return where;
  };
  createHook({ init: (id) => void made.set(id, { by: executionAsyncId(), where: here() }) }).enable();
  const record = (): void => {
    // The stack here, and the stacks where the running context and its makers were made, back to the take.
    const stacks = [here().stack ?? ''];
    for (let id = executionAsyncId(), at = made.get(id); at; id = at.by, at = made.get(id)) stacks.push(at.where.stack ?? '');
    for (const line of stacks.join('\n').split('\n')) {
      const m = FRAME.exec(line);
      if (!m) continue;
      const file = relative(root, m[2].startsWith('file:') ? fileURLToPath(m[2]) : m[2]);
      if (!HERALD_FILE.test(file)) continue;
      const source = sourceOf(file);
      const fn = (m[1] ?? '(anonymous)').replace(/^new /, '');
      let set = frames.get(source);
      if (!set) frames.set(source, (set = new Set()));
      set.add(fn);
    }
  };
  observe(Redis.prototype as unknown as Record<string, unknown>, ['sendCommand'], record);
  observe(http as unknown as Record<string, unknown>, ['request', 'get'], record);
  observe(https as unknown as Record<string, unknown>, ['request', 'get'], record);
  syncBuiltinESMExports();
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => { prepare(sql: string): object; close(): void };
  const db = new Database(':memory:');
  observe(Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, unknown>, ['run', 'get', 'all', 'iterate'], record);
  observe(Object.getPrototypeOf(db) as Record<string, unknown>, ['exec'], record);
  db.close();
  return {
    take() {
      const taken = frames;
      frames = new Map();
      made = new Map();
      return taken;
    },
  };
}

/** Replaces each named method of `target` with one that calls `before` and then the original, unchanged. */
function observe(target: Record<string, unknown>, names: string[], before: () => void): void {
  for (const name of names) {
    const original = target[name] as (...args: unknown[]) => unknown;
    target[name] = function (this: unknown, ...args: unknown[]) {
      before();
      return original.apply(this, args);
    };
  }
}
