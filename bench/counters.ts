/**
 * Work counters for the benchmarks: Redis commands sent (every ioredis client in this process: Herald's, BullMQ's)
 * and SQL statements run (every better-sqlite3 connection in this process, BEGIN/COMMIT and pragmas included; every
 * `pg` client's queries, each one round trip to PostgreSQL, BEGIN/COMMIT included).
 * Unlike timings, these do not move with the load of a shared machine, so a change to the hot path shows as a
 * difference here even when messages/s is within noise. Bench-only: they patch the libraries' prototypes in this
 * process, never in the gateway.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';

export interface WorkCounts {
  redisCommands: number;
  sqlStatements: number;
  /** CPU time of this process (user + system), ms: unlike wall time, it hardly moves with the machine's load. */
  cpuMs: number;
}

const counts = { redisCommands: 0, sqlStatements: 0 };
/**
 * BENCH_DETAIL=1: also counts by SQL text and by Redis command name (printed by printDetail), with the time each SQL
 * statement took in this thread (SQLite runs inside the process: parse, execute and, outside a transaction, commit).
 */
const detail = process.env.BENCH_DETAIL === '1' ? new Map<string, { n: number; ns: bigint; maxNs: bigint; slow: number }>() : null;
const scriptNames = new Map<string, string>();
const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');
/** BENCH_DETAIL_STACK=1: the detail names the Herald functions a statement came from too. */
const callers = (): string => {
  if (process.env.BENCH_DETAIL_STACK !== '1') return '';
  const frames = (new Error().stack ?? '').split('\n').filter((l) => /\/(apps|packages)\//.test(l) && !l.includes('sqlite-sql'));
  return ` <- ${frames
    .slice(0, 3)
    .map((l) =>
      l
        .trim()
        .replace(/^at /, '')
        .replace(/\(.*\/(apps|packages)\//, '('),
    )
    .join(' < ')}`;
};
const note = (what: string, ns = 0n): void => {
  if (!detail) return;
  const seen = detail.get(what);
  if (seen) {
    seen.n++;
    seen.ns += ns;
    if (ns > seen.maxNs) seen.maxNs = ns;
    if (ns > SLOW_NS) seen.slow++;
  } else detail.set(what, { n: 1, ns, maxNs: ns, slow: ns > SLOW_NS ? 1 : 0 });
};
/** A statement slower than this (5 ms) is counted as slow: a checkpoint, a GC pause or the machine's load. */
const SLOW_NS = 5_000_000n;
/** Runs a statement, noted under `what` with the time it took when BENCH_DETAIL=1. */
const timed = (what: () => string, run: () => unknown): unknown => {
  if (!detail) return run();
  const started = process.hrtime.bigint();
  try {
    return run();
  } finally {
    // The time first: naming the statement (a regex over its text) is not part of it.
    const took = process.hrtime.bigint() - started;
    note(what(), took);
  }
};
let installed = false;

/** Starts counting (once per process); `snapshot()` then reads the totals so far. */
export function installWorkCounters(): void {
  if (installed) return;
  installed = true;
  const redisProto = Redis.prototype as unknown as { sendCommand: (...args: unknown[]) => unknown };
  const send = redisProto.sendCommand;
  // Scripts are named by their SHA in EVALSHA: remember which name each was defined under.
  const define = (Redis.prototype as unknown as { defineCommand: (name: string, def: { lua: string }) => unknown }).defineCommand;
  (Redis.prototype as unknown as { defineCommand: typeof define }).defineCommand = function (this: unknown, name: string, def: { lua: string }) {
    scriptNames.set(sha1(def.lua), name);
    return define.call(this, name, def);
  };
  redisProto.sendCommand = function (this: unknown, ...args: unknown[]) {
    counts.redisCommands++;
    if (detail) {
      const cmd = args[0] as { name: string; args: unknown[] };
      const script = cmd.name === 'evalsha' || cmd.name === 'eval' ? String(cmd.args[0]) : '';
      note(`redis ${cmd.name}${script ? ` ${scriptNames.get(script) ?? scriptNames.get(sha1(script)) ?? script.slice(0, 12)}` : ''}`);
    }
    return send.apply(this, args);
  };
  const probe = new Database(':memory:');
  const stmtProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  // Named so that a CPU profile shows SQLite's own time (native, charged to its JS caller) as `sqliteStatement`.
  // Without BENCH_DETAIL the count is all: no closures or argument arrays per statement, so counting costs a
  // pipeline that runs more statements no more than it must.
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = stmtProto[method];
    stmtProto[method] = detail
      ? function sqliteStatement(this: { source: string }, ...args: unknown[]) {
          counts.sqlStatements++;
          return timed(
            () => `sql ${this.source.replace(/\s+/g, ' ').slice(0, 110)}${callers()}`,
            () => original.apply(this, args),
          );
        }
      : function sqliteStatement(this: unknown, ...args: unknown[]) {
          counts.sqlStatements++;
          return original.apply(this, args);
        };
  }
  // PostgreSQL: every query a pooled client sends (pool.query goes through Client.query too). With BENCH_DETAIL the
  // time noted is the round trip's (the server's work and the wait), not this process's CPU.
  const pgProto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const pgQuery = pgProto.query;
  pgProto.query = function pgStatement(this: unknown, ...args: unknown[]) {
    counts.sqlStatements++;
    if (!detail) return pgQuery.apply(this, args);
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : (config.text ?? '');
    const started = process.hrtime.bigint();
    const noted = (): void => note(`pg ${text.replace(/\s+/g, ' ').slice(0, 110)}`, process.hrtime.bigint() - started);
    // pool.query() passes a callback (and gets no promise back); a client's own query() returns one.
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = function (this: unknown, ...cbArgs: unknown[]) {
        noted();
        return (callback as (...a: unknown[]) => unknown).apply(this, cbArgs);
      };
    }
    const result = pgQuery.apply(this, args);
    if (result instanceof Promise) result.then(noted, noted);
    return result;
  };
  // pragma() runs a statement, counted above; exec() does not.
  const dbProto = Database.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const exec = dbProto.exec;
  dbProto.exec = function sqliteExec(this: unknown, ...args: unknown[]) {
    counts.sqlStatements++;
    return timed(
      () => `sql ${String(args[0]).replace(/\s+/g, ' ').slice(0, 110)}`,
      () => exec.apply(this, args),
    );
  };
}

export function snapshot(): WorkCounts {
  const cpu = process.cpuUsage();
  return { ...counts, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Per-message work between two snapshots. */
export function perMessage(before: WorkCounts, after: WorkCounts, messages: number): WorkCounts {
  return {
    redisCommands: (after.redisCommands - before.redisCommands) / messages,
    sqlStatements: (after.sqlStatements - before.sqlStatements) / messages,
    cpuMs: (after.cpuMs - before.cpuMs) / messages,
  };
}

/** With BENCH_DETAIL=1, what was counted since `resetDetail()`, per message, most frequent first. */
export function printDetail(label: string, messages: number): void {
  if (!detail) return;
  console.log(
    `# ${label}: work per message, by statement / command (SQL: per message, mean µs per run — a PostgreSQL statement's round trip —, longest run ms, runs over 5 ms)`,
  );
  for (const [what, { n, ns, maxNs, slow }] of [...detail].sort((a, b) => b[1].n - a[1].n)) {
    const micros =
      what.startsWith('sql ') || what.startsWith('pg ')
        ? `${(Number(ns / BigInt(n)) / 1000).toFixed(0).padStart(6)} µs ${(Number(maxNs) / 1e6).toFixed(1).padStart(6)} ms ${String(slow).padStart(4)}  `
        : ' '.repeat(25);
    console.log(`${(n / messages).toFixed(2).padStart(7)}  ${micros}${what}`);
  }
}

export function resetDetail(): void {
  detail?.clear();
}
