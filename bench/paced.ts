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
import { profiled } from './profile.js';
import { now, percentile, sleep } from './timing.js';

/**
 * The phases of a paced sequence: the pace, the conversations (each phase its own, `offset` from the caller's first
 * one) and the tag prefix of each message. `slow` is 50 messages/s; `warm` and `fast` are 200 messages/s, over
 * conversations enough that each gets one message a second.
 */
const PHASES = {
  slow: { paceMs: 20, sessions: 50, offset: 0, tag: 'p' },
  warm: { paceMs: 5, sessions: 200, offset: 1_000, tag: 'w200-' },
  fast: { paceMs: 5, sessions: 200, offset: 2_000, tag: 'f' },
} as const;
type Phase = keyof typeof PHASES;

/** Every conversation a paced sequence writes in, from `first`: what the Telegram stand-in must know. */
export const pacedChats = (first: number): number[] => Object.values(PHASES).flatMap((p) => Array.from({ length: p.sessions }, (_, i) => first + p.offset + i));

/**
 * Both paced runs of a pipeline, as Herald's queue bench and the floor take them: 50 messages/s (figures without a
 * suffix), then one second at 200 messages/s on conversations of its own, then the measured run at 200 messages/s
 * (`_at_200`). The one second at the faster rate is the warm-up of that rate: the first second of it, in a process
 * that had only seen the slower one, has a burst of slow messages at ≈ 0.8 s, in the floor and in Herald alike, that
 * a second run at that rate in the same process does not have, even on conversations new to it (not pinned down: no
 * Redis command took 3 ms, and a young generation fixed at 16 MB did not remove it). A process serving 200 messages/s
 * is past that second for the rest of its life. Its p99s are printed too (`_first_s_at_200`), so it is not hidden.
 *
 * `msg(n, tag)` is the caller's message for its n-th paced conversation (n from 0, as `pacedChats` counts them).
 */
export async function pacedFigures<M extends { text: string }>(
  run: PacedRun<M>,
  counts: { slow: number; fast: number },
  msg: (conversation: number, tag: string) => M,
  profileName: string,
): Promise<Record<string, number>> {
  const phase = (name: Phase, count: number): Promise<Record<string, number>> => {
    const p = PHASES[name];
    return pacedLatency(run, count, p.paceMs, (i) => msg(p.offset + (i % p.sessions), `${p.tag}${i}`));
  };
  const results = await phase('slow', counts.slow);
  const warm = await phase('warm', 1_000 / PHASES.warm.paceMs);
  results.in_to_llm_p99_first_s_at_200_ms = warm.in_to_llm_p99_ms;
  results.llm_to_send_p99_first_s_at_200_ms = warm.llm_to_send_p99_ms;
  const fast = await profiled(profileName, () => phase('fast', counts.fast));
  for (const [k, v] of Object.entries(fast)) results[`${k.replace(/_ms$/, '')}_at_200_ms`] = v;
  return results;
}

/** A message of either pipeline: Herald's InboundMessage or the floor's job; its text is its tag. */
export interface PacedRun<M extends { text: string }> {
  handle: (m: M) => Promise<unknown>;
  /** Resolves with the stand-ins' timestamps once every tag was answered. */
  answered: (tags: string[]) => Promise<{ llmIn: Map<string, number>; llmOut: Map<string, number>; sentAt: Map<string, number> }>;
}

export async function pacedLatency<M extends { text: string }>(
  run: PacedRun<M>,
  count: number,
  paceMs: number,
  msg: (i: number) => M,
): Promise<Record<string, number>> {
  const trace = process.env.BENCH_TRACE === '1';
  const eventIn = new Map<string, number>();
  const handled = new Map<string, number>();
  const tags: string[] = [];
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  const gcPauses: Array<{ at: number; ms: number; kind: number }> = [];
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcPauses.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind: (e as unknown as { detail: { kind: number } }).detail.kind });
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
    const rows = tags.map((tag, i) => [
      ms((eventIn.get(tag) as number) - start),
      ms(inToLlm[i]),
      ms(llmToSend[i]),
      ms((handled.get(tag) ?? NaN) - (eventIn.get(tag) as number)),
    ]);
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
