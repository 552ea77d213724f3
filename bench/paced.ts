/**
 * Added latency with messages handed in on a fixed schedule (message i at start + i × paceMs, whatever the event
 * loop's lag: a late tick sends what is due, so the rate holds): event in → LLM request and LLM reply → send, with
 * what else delays a message — the event loop's own lag and garbage-collection pauses.
 *
 * BENCH_TRACE=1 also prints the slowest messages, each as [ms after the start it was handed in, in → LLM,
 * LLM → send, router.handle (authorise, session read, enqueue)], and the collections that paused over 3 ms
 * ([ms after the start, pause, kind]): whether slow messages come in clusters (a stall) or spread out.
 */
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import type { InboundMessage } from '@herald/adapters';
import { now, percentile, sleep } from './timing.js';

export interface PacedRun {
  handle: (m: InboundMessage) => Promise<void>;
  /** Resolves with the stand-ins' timestamps once every tag was answered. */
  answered: (tags: string[]) => Promise<{ llmIn: Map<string, number>; llmOut: Map<string, number>; sentAt: Map<string, number> }>;
}

export async function pacedLatency(run: PacedRun, count: number, paceMs: number, msg: (i: number) => InboundMessage): Promise<Record<string, number>> {
  const trace = process.env.BENCH_TRACE === '1';
  const eventIn = new Map<string, number>();
  const handled = new Map<string, number>();
  const tags: string[] = [];
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  const gcPauses: Array<{ at: number; ms: number; kind: number }> = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcPauses.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind: (e as unknown as { detail: { kind: number } }).detail.kind });
  });
  loopDelay.enable();
  gc.observe({ entryTypes: ['gc'] });
  const start = now();
  for (let i = 0; i < count; i++) {
    const wait = start + i * paceMs - now();
    if (wait > 1) await sleep(wait);
    const m = msg(i);
    tags.push(m.text);
    eventIn.set(m.text, now());
    const done = run.handle(m);
    if (trace) void done.then(() => handled.set(m.text, now()));
  }
  const t = await run.answered(tags);
  loopDelay.disable();
  gc.disconnect();
  const inToLlm = tags.map((tag) => (t.llmIn.get(tag) as number) - (eventIn.get(tag) as number));
  const llmToSend = tags.map((tag) => (t.sentAt.get(tag) as number) - (t.llmOut.get(tag) as number));
  if (trace) {
    const ms = (v: number): number => Math.round(v);
    const rows = tags.map((tag, i) => [ms((eventIn.get(tag) as number) - start), ms(inToLlm[i]), ms(llmToSend[i]), ms((handled.get(tag) ?? NaN) - (eventIn.get(tag) as number))]);
    console.log(`trace: slowest in → LLM ${JSON.stringify([...rows].sort((a, b) => b[1] - a[1]).slice(0, 20))}`);
    console.log(`trace: slowest LLM → send ${JSON.stringify([...rows].sort((a, b) => b[2] - a[2]).slice(0, 20))}`);
    console.log(`trace: gc pauses over 3 ms ${JSON.stringify(gcPauses.filter((g) => g.ms > 3).map((g) => [ms(g.at - start), ms(g.ms), g.kind]))}`);
  }
  return {
    in_to_llm_p50_ms: percentile(inToLlm, 50),
    in_to_llm_p99_ms: percentile(inToLlm, 99),
    llm_to_send_p50_ms: percentile(llmToSend, 50),
    llm_to_send_p99_ms: percentile(llmToSend, 99),
    loop_delay_p99_ms: loopDelay.percentile(99) / 1e6,
    loop_delay_max_ms: loopDelay.max / 1e6,
    gc_pause_max_ms: gcPauses.length > 0 ? Math.max(...gcPauses.map((g) => g.ms)) : 0,
    gc_pause_total_ms: gcPauses.reduce((a, g) => a + g.ms, 0),
  };
}
