/**
 * The HTTP half shared by the OpenAI and Anthropic stand-ins: recording, the script queue, abortable delays,
 * SSE framing and abort detection. Each wire format (openai.ts, anthropic.ts) only decides what the bytes say.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PromptCache, type CacheView } from './prompt-cache.js';
import type { FakeLLM, FakeOptions, RecordedRequest, Responder, Step, StepError, StepFinish } from './types.js';

const HOST = '127.0.0.1';
/** Rough chars-per-token, only used to invent plausible usage numbers when a step gives none. */
const CHARS_PER_TOKEN = 4;
/** Size of the fragments tool-call arguments are streamed in. */
const ARGUMENT_FRAGMENT_CHARS = 8;

export interface HttpReply {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** A reply whose body is bytes (audio), not JSON. */
interface RawReply {
  status: number;
  headers: Record<string, string>;
  raw: Buffer;
}

/**
 * An endpoint beside the completion path (OpenAI's /v1/audio/speech and /v1/audio/transcriptions): authorised like
 * it, answered by the route from the request and its raw bytes (multipart bodies are not text).
 */
export type ExtraRoute = (req: RecordedRequest, raw: Buffer) => HttpReply | RawReply | Promise<HttpReply | RawReply>;

export interface SseEvent {
  /** The `event:` line; omitted (OpenAI) when undefined. */
  event?: string;
  /** Serialised as JSON unless already a string (`[DONE]`). */
  data: unknown;
  /** A content delta: `chunkDelayMs` is waited before every delta but the first. */
  delta?: boolean;
}

/** What one wire API says; the server does the rest. */
export interface WireFormat {
  /** Path prefix of the URL handed to the SDK ('/v1' for OpenAI, '' for Anthropic). */
  basePath: string;
  completionPath: string;
  requestIdHeader: string;
  /** A reply when the request is not authorised, else undefined. */
  checkAuth(headers: Record<string, string>, apiKey: string | undefined): HttpReply | undefined;
  /** A reply when the request breaks the API's rules, else undefined. */
  validate(body: Record<string, unknown>, headers: Record<string, string>): HttpReply | undefined;
  lastUserText(body: Record<string, unknown>): string;
  errorReply(error: StepError, body: Record<string, unknown>): HttpReply;
  notFoundReply(method: string, path: string): HttpReply;
  streamEvents(step: Step, body: Record<string, unknown>): SseEvent[];
  jsonBody(step: Step, body: Record<string, unknown>): unknown;
  /** POST endpoints by path, besides `completionPath`. */
  routes?: Record<string, ExtraRoute>;
  /** How the provider caches this API's prompts (prompt-cache.ts); used when the stand-in models caching. */
  promptCache?: { rule: 'anthropic' | 'openai'; view(body: Record<string, unknown>): CacheView };
}

/** One wire format, or several served side by side (Chat Completions and Responses under one OpenAI /v1). */
export async function startFakeServer(wires: WireFormat | WireFormat[], opts: FakeOptions = {}): Promise<FakeLLM> {
  const formats = Array.isArray(wires) ? wires : [wires];
  const primary = formats[0];
  const requests: RecordedRequest[] = [];
  const queue: Step[] = [];
  let responder: Responder | undefined;
  let active = 0;
  const cache = opts.promptCache ? new PromptCache(opts.promptCache === true ? {} : opts.promptCache) : undefined;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in a responder must fail the test loudly, not hang the client.
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake LLM failed: ${err instanceof Error ? err.message : String(err)}`);
      } else {
        res.destroy();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', `http://${HOST}`).pathname,
      headers: flattenHeaders(req.headers),
      body: {},
      rawBody: '',
      aborted: false,
      remotePort: req.socket.remotePort,
      startedAt: Date.now(),
    };
    requests.push(rec);
    active += 1;
    let closed = false;
    const closedPromise = new Promise<void>((resolve) => {
      res.on('close', () => {
        closed = true;
        if (!res.writableFinished) rec.aborted = true;
        rec.endedAt = Date.now();
        active -= 1;
        resolve();
      });
    });
    const waitUnlessClosed = async (ms: number): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((r) => (timer = setTimeout(r, ms))), closedPromise]);
      clearTimeout(timer);
    };
    const requestId = `req_${randomBytes(12).toString('hex')}`;
    const routed = formats.find((w) => w.completionPath === rec.path);
    const wire = routed ?? primary;
    const reply = (r: HttpReply): void => sendJson(res, r, { [wire.requestIdHeader]: requestId });

    const raw = await readRawBody(req);
    rec.rawBody = raw.toString('utf8');
    rec.body = parseObject(rec.rawBody);

    const extra = rec.method === 'POST' ? formats.map((w) => w.routes?.[rec.path]).find((r) => r !== undefined) : undefined;
    if (extra) {
      const denied = wire.checkAuth(rec.headers, opts.apiKey);
      if (denied) return reply(denied);
      const out = await extra(rec, raw);
      if (!('raw' in out)) return reply(out);
      res.writeHead(out.status, { ...out.headers, 'content-length': String(out.raw.length), [wire.requestIdHeader]: requestId });
      return void res.end(out.raw);
    }
    if (rec.method !== 'POST' || !routed) return reply(wire.notFoundReply(rec.method, rec.path));
    const unauthorised = wire.checkAuth(rec.headers, opts.apiKey);
    if (unauthorised) return reply(unauthorised);
    const invalid = wire.validate(rec.body, rec.headers);
    if (invalid) return reply(invalid);

    const scripted = queue.shift() ?? (responder ? await responder(rec) : { text: `ok: ${wire.lastUserText(rec.body)}` });
    const step = cache && wire.promptCache && !scripted.error ? withCacheUsage(scripted, rec, cache, wire.promptCache) : scripted;
    if (step.delayMs) await waitUnlessClosed(step.delayMs);
    if (closed) return;

    if (step.error) {
      const r = withErrorMessage(wire.errorReply(step.error, rec.body), step.error.message);
      const retry: Record<string, string> = step.error.retryAfter === undefined ? {} : { 'retry-after': String(step.error.retryAfter) };
      return reply({ ...r, headers: { ...r.headers, ...retry } });
    }
    if (rec.body.stream !== true) return reply({ status: 200, body: wire.jsonBody(step, rec.body) });

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      [wire.requestIdHeader]: requestId,
    });
    let deltasSent = 0;
    let eventsSent = 0;
    for (const ev of wire.streamEvents(step, rec.body)) {
      // Stall mode: the stream goes silent with the connection open, until the client gives up on it.
      const sent = eventsSent++;
      if (step.stallAfterEvents !== undefined && sent >= step.stallAfterEvents) {
        await closedPromise;
        return;
      }
      // Reset mode: the connection is cut mid-stream, as a proxy or a dying server does.
      // What was written goes out first (Node corks a chunked response until the next tick), so the client has
      // the answer's head and those events: without that it would see a connection closed before any answer.
      if (step.dropAfterEvents !== undefined && sent >= step.dropAfterEvents) {
        res.flushHeaders();
        await new Promise<void>((resolve) => setImmediate(resolve));
        res.socket?.destroy();
        return;
      }
      if (ev.delta && deltasSent++ > 0 && step.chunkDelayMs) await waitUnlessClosed(step.chunkDelayMs);
      if (closed) return;
      const data = typeof ev.data === 'string' ? ev.data : JSON.stringify(ev.data);
      res.write(`${ev.event === undefined ? '' : `event: ${ev.event}\n`}data: ${data}\n\n`);
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${HOST}:${port}${primary.basePath}`,
    requests,
    script: (...steps) => void queue.push(...steps),
    respondWith: (fn) => void (responder = fn),
    activeRequests: () => active,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The step with the usage the provider's cache would report (a step's own usage figures win); recorded on the request. */
function withCacheUsage(step: Step, rec: RecordedRequest, cache: PromptCache, how: NonNullable<WireFormat['promptCache']>): Step {
  const view = how.view(rec.body);
  const usage = how.rule === 'anthropic' ? cache.anthropic(view) : cache.openai(view);
  rec.cache = usage;
  return { ...step, usage: { input: usage.uncached, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite, ...step.usage } };
}

/** Both wire formats carry the error's text in `error.message`. */
function withErrorMessage(r: HttpReply, message: string | undefined): HttpReply {
  if (message === undefined || !isRecord(r.body) || !isRecord(r.body.error)) return r;
  return { ...r, body: { ...r.body, error: { ...r.body.error, message } } };
}

function sendJson(res: ServerResponse, r: HttpReply, extraHeaders: Record<string, string>): void {
  const payload = JSON.stringify(r.body);
  res.writeHead(r.status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
    ...extraHeaders,
    ...r.headers,
  });
  res.end(payload);
}

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readRawBody(req)).toString('utf8');
}

function readRawBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    // A client that vanishes mid-upload: answer with what arrived; 'close' records the abort.
    req.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

export function flattenHeaders(h: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export function parseObject(raw: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(raw);
    return isRecord(v) ? v : {};
  } catch {
    return {};
  }
}

// ---- helpers shared by the wire formats ----

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function randomId(prefix: string, bytes = 12): string {
  return `${prefix}${randomBytes(bytes).toString('hex')}`;
}

/** Words with their trailing whitespace, so joining the deltas gives back the text exactly. */
export function splitDeltas(text: string): string[] {
  if (text === '') return [];
  return text.match(/\s*\S+\s*/g) ?? [text];
}

export function splitFragments(text: string, size = ARGUMENT_FRAGMENT_CHARS): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function finishOf(step: Step): StepFinish {
  return step.finish ?? (step.toolCalls?.length ? 'tool_calls' : 'stop');
}

export interface ResolvedUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost?: number;
}

/** The step's usage, with plausible numbers invented for whatever it leaves out. */
export function usageOf(step: Step, body: Record<string, unknown>): ResolvedUsage {
  const estimate = (s: string): number => Math.max(1, Math.ceil(s.length / CHARS_PER_TOKEN));
  const produced = (step.text ?? '') + (step.reasoning ?? '') + (step.toolCalls ?? []).map((t) => t.arguments).join('');
  return {
    input: step.usage?.input ?? estimate(JSON.stringify(body.messages ?? '')),
    output: step.usage?.output ?? estimate(produced),
    cacheRead: step.usage?.cacheRead ?? 0,
    cacheWrite: step.usage?.cacheWrite ?? 0,
    ...(step.usage?.cost !== undefined ? { cost: step.usage.cost } : {}),
  };
}

/** The kind a step's error asks for, inferred from the status when not given. */
export function errorKindOf(error: StepError): NonNullable<StepError['kind']> {
  if (error.kind) return error.kind;
  switch (error.status) {
    case 401:
    case 403:
      return 'auth';
    case 402:
      return 'payment_required';
    case 404:
      return 'not_found';
    case 413:
      return 'too_large';
    case 429:
      return 'rate_limit';
    case 529:
      return 'overloaded';
    case 400:
      return 'context_length';
    default:
      return 'server';
  }
}

/** Text of the last user message that has any, for the echo responder. */
export function lastTextOf(messages: unknown, textOf: (content: unknown) => string): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m: unknown = messages[i];
    if (!isRecord(m) || m.role !== 'user') continue;
    const text = textOf(m.content);
    if (text !== '') return text;
  }
  return '';
}
