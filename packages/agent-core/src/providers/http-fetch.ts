/**
 * The SDKs' `fetch`, on Node's own HTTP client instead of undici's WHATWG `fetch()`.
 *
 * Why: a V8 young-generation collection keeps alive whatever a WeakRef or a FinalizationRegistry points at, and
 * undici's fetch makes both for every request (its Request's AbortController, its Response's body stream), as
 * does an abort listener on a signal made by `AbortSignal.any` (how the OpenAI SDK joins a caller's signal to its
 * own) and `Readable.toWeb`. So each model request's object graph (body, headers, streams, buffers, and what
 * their listeners reach) was copied into the old generation to wait for a full collection. Measured with two
 * forced young collections after 1,000 requests (`tmp` script, commit 5f06c21; CHANGELOG, wave 2): undici's fetch ≈ 25 KB per
 * request left in the old generation, this fetch ≈ 0.6 KB.
 *
 * The caller's signal reaches this fetch past the SDK (`callerSignalOptions`): handed to the OpenAI SDK as
 * `signal`, it would become an `AbortSignal.any` composite. Like fetch, this asks for and decodes a compressed
 * answer; a redirect, a body other than a string or bytes (a form upload, a stream) and a scheme other than
 * http(s) go to `fallback` (undici's fetch), which covers the whole standard.
 *
 * The answer is a light Response (`NodeResponse`, below): what the SDKs read of one (status, headers, a body they
 * iterate, text/json/arrayBuffer), over Node's IncomingMessage, without undici's. Building undici's per request
 * (its Headers from the raw list, each value checked by WebIDL, and a ReadableStream over the body that every read
 * goes through) was ≈ 60 µs of a message's ≈ 1.3 ms of CPU in the throughput benchmark (commit 91ace84; CHANGELOG,
 * wave 2). Both SDKs read a body that is an async iterable as one (`ReadableStreamToAsyncIterable`,
 * `CancelReadableStream`), so nothing of the web stream is needed. What is left out, as the SDKs never use it:
 * `clone()` (throws) and `formData()`. Headers are read-only, as a fetch Response's are.
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** What the SDKs accept as `fetch`: the WHATWG signature. */
export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const CALLER_SIGNAL: unique symbol = Symbol('herald.callerSignal');

/**
 * Request options for an SDK call whose request the transport's fetch aborts on `signal`. Both SDKs copy
 * `fetchOptions` (symbol keys included) into the init they hand to `fetch`.
 */
export function callerSignalOptions(signal: AbortSignal): { fetchOptions: Record<never, never> } {
  // Typed as an empty init: the SDKs' option types know no symbol keys, and the value only means something here.
  return { fetchOptions: { [CALLER_SIGNAL]: signal } };
}

/** Statuses whose response has no body by definition (fetch gives them a null body). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DECODERS: Record<string, () => Transform> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress };
const ignore = (): void => undefined;
// The characters a reason phrase may hold (RFC 9110: HTAB, SP, VCHAR, obs-text).
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function httpFetch(agents: { http: HttpAgent; https: HttpsAgent }, fallback: FetchFn): FetchFn {
  return async (input, init) => {
    const body = init?.body;
    const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
    const https = url?.protocol === 'https:';
    if (!plainBody || !url || (!https && url.protocol !== 'http:')) return fallback(input, init);

    const caller = (init as Record<symbol, AbortSignal | undefined> | undefined)?.[CALLER_SIGNAL];
    // The SDK's own signal (its timeout) and the caller's, each with a plain listener (no `AbortSignal.any`, see above).
    const signals = [init?.signal, caller].filter((s): s is AbortSignal => s != null);
    const method = (init?.method ?? 'GET').toUpperCase();
    const options = { method, headers: requestHeaders(init?.headers, https), agent: https ? agents.https : agents.http };
    const res = await exchange(https ? httpsRequest : httpRequest, url, options, body ?? undefined, signals);
    const status = res.statusCode ?? 0;
    if (REDIRECT_STATUSES.has(status) && res.headers.location !== undefined) {
      res.resume();
      // Rare for an API: fetch follows it, under both signals again (here `AbortSignal.any` costs nothing that matters).
      return fallback(input, { ...init, signal: signals.length > 1 ? AbortSignal.any(signals) : (signals[0] ?? null) });
    }
    const noBody = NULL_BODY_STATUSES.has(status) || method === 'HEAD';
    if (noBody) res.resume();
    const stream = noBody ? null : bodyOf(res, decoded(res, res.headers['content-encoding']));
    // A reason phrase with control characters, which Node's parser lets through and fetch's Response refuses, is dropped.
    const statusText = REASON_PHRASE.test(res.statusMessage ?? '') ? (res.statusMessage ?? '') : '';
    return new NodeResponse(stream, { status, statusText, url: url.href, headers: res.headers }) as unknown as Response;
  };
}

type Send = typeof httpRequest;

/**
 * One request, answered by its response head; aborted on any of `signals`.
 *
 * A kept-alive connection the server closed while it sat idle (its FIN still on the way, or the agent's idle timer
 * late on a busy event loop) fails the request before any answer came. As Node's documentation advises
 * (`request.reusedSocket`), such a request is sent again at once on another connection instead of failing a model
 * call and costing a retry's back-off; a connection made for it that fails is an error as before. Each retry spends
 * one reused connection (it is closed), so they are bounded by the pool.
 */
function exchange(send: Send, url: URL, options: Parameters<Send>[1], body: string | Uint8Array | undefined, signals: AbortSignal[]): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, options);
    let got: IncomingMessage | undefined;
    const done = (): void => {
      for (const s of signals) s.removeEventListener('abort', onAbort);
    };
    function onAbort(this: AbortSignal): void {
      done();
      const err = abortError(this.reason);
      req.destroy(err);
      got?.destroy(err);
      reject(err);
    }
    // Every error after the first (the socket's, then the abort's) needs a listener too.
    req.on('error', (err: NodeJS.ErrnoException) => {
      done();
      if (!got && req.reusedSocket && err.code === 'ECONNRESET' && !signals.some((s) => s.aborted)) resolve(exchange(send, url, options, body, signals));
      else reject(err);
    });
    req.once('response', (r) => {
      got = r;
      // Errors reach the reader through the body stream; unread, they must not crash the process.
      r.on('error', ignore);
      r.once('close', done);
      resolve(r);
    });
    const aborted = signals.find((s) => s.aborted);
    if (aborted) return onAbort.call(aborted);
    for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
}

/**
 * A Response body that reads `stream` through one async iterator, whoever asks for one (the SDK's reader, then its
 * cancel): not `Readable.toWeb(...)` (see above), and not the stream itself, each of whose iterators stays
 * subscribed to it until it ends.
 *
 * A reader that stops early (the SDKs do once the stream's last event came, before the chunked body's end marker
 * was read) leaves the rest to be read and dropped, so the connection goes back to the pool instead of being cut:
 * a new one for every request cost more than the request itself. A stop that is an abort cuts it (`httpFetch`),
 * and so does a body that has not ended `DRAIN_MS` later.
 */
function bodyOf(res: IncomingMessage, stream: Readable): AsyncIterable<Uint8Array> {
  const reading = stream.iterator({ destroyOnReturn: false }) as AsyncIterator<Uint8Array>;
  const iterator: AsyncIterator<Uint8Array> = {
    next: () => reading.next(),
    return: async (value?: unknown) => {
      await reading.return?.();
      drain(res, stream);
      return { done: true, value };
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

const DRAIN_MS = 1_000;

function drain(res: IncomingMessage, stream: Readable): void {
  if (res.destroyed || stream.readableEnded) return;
  const cut = setTimeout(() => res.destroy(), DRAIN_MS);
  cut.unref();
  res.once('close', () => clearTimeout(cut));
  stream.resume();
}

/** An abort as fetch reports one: an AbortError carrying the signal's reason. */
function abortError(reason: unknown): Error {
  return Object.assign(new Error('This operation was aborted', { cause: reason }), { name: 'AbortError' });
}

/** The body as sent, or decoded the way fetch decodes it (one coding; anything else is passed on untouched). */
function decoded(body: Readable, encoding: string | string[] | undefined): Readable {
  const decoder = typeof encoding === 'string' ? DECODERS[encoding.trim().toLowerCase()] : undefined;
  if (!decoder) return body;
  const out = decoder();
  out.on('error', ignore);
  body.on('error', (err) => out.destroy(err));
  return body.pipe(out);
}

/** The SDK's request headers as Node's, asking for what fetch asks for when they do not say. */
function requestHeaders(headers: RequestInit['headers'], https: boolean): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  if (headers) {
    for (const [name, value] of headers instanceof Headers ? headers : new Headers(headers)) out[name] = value;
  }
  out['accept-encoding'] ??= https ? 'br, gzip, deflate' : 'gzip, deflate';
  return out;
}

/** A fetch Response's headers over Node's parsed ones (names lower case; repeats joined, set-cookie kept apart). */
export class NodeHeaders implements Iterable<[string, string]> {
  constructor(private readonly raw: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const v = this.raw[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }

  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }

  getSetCookie(): string[] {
    return this.raw['set-cookie'] ?? [];
  }

  /**
   * In name order, set-cookie once per cookie, as a fetch Headers iterates. The OpenAI SDK spreads them for every
   * response: one array, not a generator's step by step, and the dozen names sorted by `byName`.
   */
  entries(): IterableIterator<[string, string]> {
    const out: Array<[string, string]> = [];
    for (const name of byName(Object.keys(this.raw))) {
      if (name === 'set-cookie') for (const c of this.getSetCookie()) out.push([name, c]);
      else out.push([name, this.get(name) as string]);
    }
    return out[Symbol.iterator]();
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(fn: (value: string, name: string, headers: NodeHeaders) => void): void {
    for (const [name, value] of this.entries()) fn(value, name, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  append(): never {
    throw new TypeError('immutable: the headers of a response cannot be changed');
  }

  set(): never {
    return this.append();
  }

  delete(): never {
    return this.append();
  }
}

/** Names sorted in place as `Array#sort` sorts them; a short list by insertion, without the work arrays sort() makes. */
function byName(names: string[]): string[] {
  if (names.length > 64) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i];
    let j = i - 1;
    for (; j >= 0 && names[j] > name; j--) names[j + 1] = names[j];
    names[j + 1] = name;
  }
  return names;
}

export interface NodeResponseInit {
  status: number;
  statusText: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export class NodeResponse {
  readonly type = 'basic';
  readonly redirected = false;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly headers: NodeHeaders;
  private used = false;

  constructor(
    private readonly stream: AsyncIterable<Uint8Array> | null,
    init: NodeResponseInit,
  ) {
    this.status = init.status;
    this.statusText = init.statusText;
    this.url = init.url;
    this.headers = new NodeHeaders(init.headers);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  /** The body as the SDKs read it: an async iterable of byte chunks (null for a status without one). */
  get body(): AsyncIterable<Uint8Array> | null {
    return this.stream;
  }

  get bodyUsed(): boolean {
    return this.used;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    if (!this.stream) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    for await (const c of this.stream) chunks.push(c);
    return Buffer.concat(chunks);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = await this.bytes();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }

  /** UTF-8, a byte-order mark dropped, as fetch decodes. */
  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get('content-type') ?? '' });
  }

  clone(): never {
    throw new TypeError('this transport does not clone responses');
  }
}
