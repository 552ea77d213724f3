/**
 * The fuzz suites' engine (test/fuzz): fast-check generates the payloads, one real gateway process takes them,
 * and afterwards the process must still be alive and healthy, must not have logged an error nothing caught, and
 * must not have grown its memory with what it was sent.
 *
 * 10,000 payloads per ingress, in `npm test` and in `npm run fuzz` (the suite alone); `HERALD_FUZZ_RUNS=<n>` sends
 * another number. Every run prints its seed; `HERALD_FUZZ_SEED=<seed>` generates the same payloads again.
 */
import { request } from 'node:http';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';
import { UNCAUGHT_EXCEPTION_LOG, UNHANDLED_REJECTION_LOG } from '../../apps/gateway/src/support/ops/process-failures.js';
import type { GatewayProcess } from '../helpers/gateway.js';
import { metric } from '../helpers/metrics.js';
import type { RawBody } from './arbitraries.js';

export const FUZZ_RUNS = Number(process.env.HERALD_FUZZ_RUNS ?? 10_000);
export const FUZZ_SEED = process.env.HERALD_FUZZ_SEED !== undefined ? Number(process.env.HERALD_FUZZ_SEED) : Date.now() % 1_000_000_007;
/** Long enough for a whole run on a loaded machine (10–40 s each here); only reached when something hangs. */
export const FUZZ_TEST_TIMEOUT_MS = Math.max(300_000, FUZZ_RUNS * 60);
/** The first tenth of the payloads warms the process up (JIT, pools, caches) before memory is measured. */
const WARMUP_SHARE = 0.1;
const GC_PRELOAD = resolve(import.meta.dirname, 'gc-on-signal.cjs');
const GC_DONE_LOG = 'fuzz: garbage collected';
/**
 * Memory is measured twice, at the end of the warm-up and at the end of the run, each time right after a full
 * garbage collection (gc-on-signal.cjs), from `/metrics`: V8 heap used, external memory (Buffers: request bodies
 * live there) and RSS. After a collection, heap and external memory hold what the process keeps; without one,
 * samples land anywhere on the collector's sawtooth, tens of MB apart. A leak worth the name keeps something per
 * payload: one retained request body (up to 1 MiB here) or a client cached per distinct id would add hundreds of
 * MB over 9,000 payloads, so kept memory may grow by MAX_KEPT_GROWTH_BYTES at most (caches filling up to their
 * limits — recent ids, Discord's message cache — stay far below). RSS only gets a coarse bound: it counts pages
 * the allocator holds on to, which ratchet up with the largest bodies seen so far (10–50 MB over a run here)
 * even when nothing is kept. A leak of a few hundred bytes per payload would not show, and is not what
 * this guards against.
 */
const MAX_KEPT_GROWTH_BYTES = 64 * 1024 * 1024;
const MAX_RSS_GROWTH_BYTES = 128 * 1024 * 1024;

interface MemorySample {
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
}

export interface FuzzRun {
  payloads: number;
  seconds: number;
  afterWarmup: MemorySample;
  atEnd: MemorySample;
}

/** Environment for a gateway the fuzz suite measures: its memory can be read after a full collection. */
export function fuzzedGatewayEnv(): Record<string, string> {
  return { NODE_OPTIONS: `--expose-gc --require "${GC_PRELOAD}"` };
}

/** RSS, V8 heap used and external memory, right after a full garbage collection in the gateway. */
async function memoryOf(gw: GatewayProcess): Promise<MemorySample> {
  const collections = gw.logs().filter((l) => l.msg === GC_DONE_LOG).length + 1;
  gw.proc.kill('SIGUSR2');
  await gw.waitForLog((l) => l.msg === GC_DONE_LOG && l.collections === collections, 'a full garbage collection');
  const names = ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes'];
  const [rssBytes, heapUsedBytes, externalBytes] = await Promise.all(names.map((n) => metric(gw, n)));
  if (rssBytes === null || heapUsedBytes === null || externalBytes === null) throw new Error(`/metrics lacks one of ${names.join(', ')}`);
  return { rssBytes, heapUsedBytes, externalBytes };
}

/**
 * Sends FUZZ_RUNS payloads from `payloads`, each through `send`, which throws when the gateway's answer is wrong.
 * A failure names the seed, the first payload that failed (before fast-check shrinks it) and the gateway's last
 * log lines.
 */
export async function fuzz<T>(name: string, gw: GatewayProcess, payloads: fc.Arbitrary<T>, send: (payload: T) => Promise<void>): Promise<FuzzRun> {
  const warmupRuns = Math.ceil(FUZZ_RUNS * WARMUP_SHARE);
  let runs = 0;
  let afterWarmup: MemorySample | null = null;
  let firstFailure: { payload: T; error: unknown } | null = null;
  const started = performance.now();
  try {
    await fc.assert(
      fc.asyncProperty(payloads, async (payload) => {
        try {
          await send(payload);
        } catch (error) {
          firstFailure ??= { payload, error };
          throw error;
        }
        runs += 1;
        if (runs === warmupRuns) afterWarmup = await memoryOf(gw);
      }),
      { numRuns: FUZZ_RUNS, seed: FUZZ_SEED },
    );
  } catch (err) {
    const first = firstFailure as { payload: T; error: unknown } | null;
    const detail = first ? `first failing payload: ${preview(first.payload)}\nits error: ${String(first.error)}\n` : '';
    const alive = gw.proc.exitCode === null && gw.proc.signalCode === null ? 'still running' : `exited (${gw.proc.exitCode ?? gw.proc.signalCode})`;
    throw new Error(
      `fuzz ${name} failed (HERALD_FUZZ_SEED=${FUZZ_SEED} repeats it); the gateway is ${alive}\n${detail}` +
        `last gateway log lines:\n${gw.output.slice(-15).join('\n')}\n\n${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const seconds = (performance.now() - started) / 1000;
  const atEnd = await memoryOf(gw);
  const run: FuzzRun = { payloads: runs, seconds, afterWarmup: afterWarmup ?? atEnd, atEnd };
  const mb = (n: number): string => (n / 1024 / 1024).toFixed(1);
  console.log(
    `fuzz ${name}: ${runs} payloads in ${seconds.toFixed(1)} s (seed ${FUZZ_SEED}); after full collections, ` +
      `heap used ${mb(run.afterWarmup.heapUsedBytes)} → ${mb(atEnd.heapUsedBytes)} MB, external ${mb(run.afterWarmup.externalBytes)} → ` +
      `${mb(atEnd.externalBytes)} MB, rss ${mb(run.afterWarmup.rssBytes)} → ${mb(atEnd.rssBytes)} MB`,
  );
  return run;
}

/**
 * After a run: the process is alive and answers /health, never logged an error nothing caught, and its memory
 * did not grow past the bounds above from the end of the warm-up to the end of the run.
 */
export async function expectSurvived(gw: GatewayProcess, run: FuzzRun): Promise<void> {
  expect(run.payloads).toBe(FUZZ_RUNS);
  expect(gw.proc.exitCode, 'the gateway exited').toBeNull();
  expect(gw.proc.signalCode, 'the gateway was killed').toBeNull();
  expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  const uncaught = gw.logs().filter((l) => l.msg === UNHANDLED_REJECTION_LOG || l.msg === UNCAUGHT_EXCEPTION_LOG);
  expect(uncaught, 'errors nothing caught').toEqual([]);
  const grew = (key: keyof MemorySample): number => run.atEnd[key] - run.afterWarmup[key];
  expect(grew('heapUsedBytes') + grew('externalBytes'), 'growth of kept memory, heap + external (bytes)').toBeLessThan(MAX_KEPT_GROWTH_BYTES);
  expect(grew('rssBytes'), 'RSS growth (bytes)').toBeLessThan(MAX_RSS_GROWTH_BYTES);
}

/** What a webhook fuzz run checks besides each answer's status. */
export interface WebhookFuzzChecks<C> {
  /** Further checks of one answer (throw when it is wrong). */
  check?: (c: C, text: string) => void;
  /** What the LLM was asked (its last user texts) after the run, and what it may have been asked: the control only. */
  llmInputs: () => string[];
  allowedLlmInputs: string[];
}

/**
 * One webhook's whole run: every case POSTed by `post`; an answer carrying a stack trace or a status the case does
 * not allow fails it. Afterwards the gateway survived (expectSurvived), logged no error stacks, and nothing but
 * the control reached the LLM.
 */
export async function fuzzWebhook<C extends HttpCase>(
  name: string,
  gw: GatewayProcess,
  cases: fc.Arbitrary<C>,
  post: (c: C) => Promise<Response>,
  checks: WebhookFuzzChecks<C>,
): Promise<void> {
  const run = await fuzz(name, gw, cases, async (c) => {
    const res = await post(c);
    const text = await res.text();
    if (hasStackTrace(text)) throw new Error(`${c.kind}: a stack trace in the answer: ${text.slice(0, 200)}`);
    if (!statusOk(c.expected, res.status, c.raw)) throw new Error(`${c.kind}: HTTP ${res.status} (${text.slice(0, 200)}), expected ${String(c.expected)}`);
    checks.check?.(c, text);
  });
  await expectSurvived(gw, run);
  expectNoErrorStacks(gw);
  expect(checks.llmInputs(), 'no LLM request for a fuzz payload').toEqual(checks.allowedLlmInputs);
}

/** A JavaScript stack trace: `at fn (file:line:col)` lines, raw or JSON-escaped (`\\n    at …`), or a `"stack"` field. */
const STACK_RE = /(?:^|\n|\\n)\s*at \S[^\n]*:\d+:\d+|"stack"\s*:/;

export function hasStackTrace(text: string): boolean {
  return STACK_RE.test(text);
}

/** Bad input is logged as a warning at most: no error-level line carries a stack trace. */
export function expectNoErrorStacks(gw: GatewayProcess): void {
  const withStacks = gw.logs().filter((l) => typeof l.level === 'number' && l.level >= 50 && hasStackTrace(JSON.stringify(l)));
  expect(
    withStacks.map((l) => String(l.msg)),
    'error-level log lines with a stack trace',
  ).toEqual([]);
}

/** The HTTP statuses a payload may get: exact ones, any 4xx, or anything but a 5xx. */
export type Expected = readonly number[] | '4xx' | 'not 5xx';

/** One generated HTTP request body and what the gateway must answer to it. */
export interface HttpCase {
  kind: string;
  raw: RawBody;
  expected: Expected;
}

/**
 * fastify refuses JSON that tries prototype poisoning (a `__proto__` key, or `constructor.prototype`) with a 400
 * wherever it sits in the body, whatever the rest would have got: such a body may always get a 400.
 */
function poisoningAttempt(raw: RawBody | undefined): boolean {
  if (raw === undefined || typeof raw.body !== 'string') return false;
  let found = false;
  try {
    JSON.parse(raw.body, (key, value: unknown) => {
      if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)) found = true;
      return value;
    });
  } catch {
    return false;
  }
  return found;
}

export function statusOk(expected: Expected, status: number, raw?: RawBody): boolean {
  if (status === 400 && poisoningAttempt(raw)) return true;
  if (expected === 'not 5xx') return status < 500;
  if (expected === '4xx') return status >= 400 && status < 500;
  return expected.includes(status);
}

/** A payload for an error message: JSON, strings and bytes shown, cut to a readable length. */
function preview(payload: unknown): string {
  const text = fc.stringify(payload);
  return text.length > 2_000 ? `${text.slice(0, 2_000)}… (${text.length} characters)` : text;
}

/** How long an over-limit POST may wait for its refusal before the check fails. */
const OVERSIZE_ANSWER_MS = 30_000;

/**
 * The status a POST whose body is over the gateway's limit gets. The gateway refuses such a body on its
 * Content-Length alone and closes the connection without reading it, as HTTP allows: a client still uploading may
 * see the connection reset before it reads the answer (fetch: "fetch failed"), depending on timing. So only the
 * headers go out, and the answer is read before any of the body is sent: deterministic, and the refusal provably
 * comes from the declared length, not from reading a megabyte.
 */
export function oversizeStatus(url: string, raw: RawBody, headers: Record<string, string>): Promise<number> {
  const length = typeof raw.body === 'string' ? Buffer.byteLength(raw.body) : raw.body.byteLength;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, ...(raw.contentType === null ? {} : { 'content-type': raw.contentType }), 'content-length': String(length) },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer to an over-limit POST within ${OVERSIZE_ANSWER_MS} ms: the body is being waited for`));
    }, OVERSIZE_ANSWER_MS);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.flushHeaders();
  });
}
