/**
 * The throughput part of both pipelines (Herald's queue bench and the floor): `count` messages submitted at once,
 * then messages/s from the first submission to the last reply, and the work per message in this process (CPU time,
 * Redis commands, SQL statements, as counted since the caller's `installWorkCounters()`; `BENCH_DETAIL=1` lists
 * them by statement and command under `label`), the stand-ins' CPU time per message, and the servers' (Redis,
 * PostgreSQL) with the whole machine's.
 */
import { perMessage, printDetail, resetDetail, snapshot } from './counters.js';
import { profiled } from './profile.js';
import { type ServersCpu, serversCpuFigures } from './servers-cpu.js';
import { now } from './timing.js';

export interface ThroughputRun {
  /** Figures' label for BENCH_DETAIL and the CPU profile's name (BENCH_PROFILE). */
  label: string;
  profileName: string;
  count: number;
  /** The i-th message's tag, unique in the run. */
  tag: (i: number) => string;
  submit: (tag: string, i: number) => Promise<unknown>;
  /** Resolves with the stand-ins' send times once every tag was answered. */
  answered: (tags: string[]) => Promise<{ sentAt: Map<string, number> }>;
  /**
   * The stand-ins' CPU time so far (ms). They share the machine's cores with the pipeline, so what a pipeline's
   * requests cost them to answer (bigger requests, more calls) is part of its messages/s on a 2-core machine.
   */
  standInsCpuMs: () => Promise<number>;
  /** PostgreSQL: the server's WAL position in bytes (bench/postgres.ts walBytes); adds `wal_bytes_per_message`. */
  walBytes?: () => Promise<number>;
  /** The servers' CPU (bench/servers-cpu.ts): adds theirs and the machine's CPU a message. */
  servers: ServersCpu;
}

export async function throughputFigures(run: ThroughputRun): Promise<Record<string, number>> {
  const tags = Array.from({ length: run.count }, (_, i) => run.tag(i));
  const standInsBefore = await run.standInsCpuMs();
  const walBefore = await run.walBytes?.();
  const serversBefore = await run.servers.read();
  const before = snapshot();
  resetDetail();
  const started = now();
  const t = await profiled(run.profileName, async () => {
    await Promise.all(tags.map((tag, i) => run.submit(tag, i)));
    return run.answered(tags);
  });
  const lastSent = Math.max(...tags.map((tag) => t.sentAt.get(tag) ?? 0));
  const work = perMessage(before, snapshot(), run.count);
  const serversAfter = await run.servers.read();
  const standInsMs = (await run.standInsCpuMs()) - standInsBefore;
  const walAfter = await run.walBytes?.();
  printDetail(run.label, run.count);
  return {
    ...(walBefore !== undefined && walAfter !== undefined && { wal_bytes_per_message: (walAfter - walBefore) / run.count }),
    messages_per_s: (run.count / (lastSent - started)) * 1000,
    cpu_ms_per_message: work.cpuMs,
    redis_commands_per_message: work.redisCommands,
    sql_statements_per_message: work.sqlStatements,
    standins_cpu_ms_per_message: standInsMs / run.count,
    ...serversCpuFigures(serversBefore, serversAfter, run.count, 'message', work.cpuMs + standInsMs / run.count),
  };
}
