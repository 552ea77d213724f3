/**
 * The Response the transport fetch (http-fetch.ts) hands the SDKs: what they read of one (status, headers, a body
 * they iterate, text/json/arrayBuffer), over Node's IncomingMessage, without undici's Response.
 *
 * Why not undici's: building one per request (its Headers from the raw list, each value checked by WebIDL, and a
 * ReadableStream over the body that every read goes through) was ≈ 60 µs of a message's ≈ 1.3 ms of CPU in the
 * throughput benchmark (commit 91ace84; CHANGELOG, wave 2). Both SDKs read a body that is an async iterable as one
 * (`ReadableStreamToAsyncIterable`, `CancelReadableStream`), so nothing of the web stream is needed.
 *
 * What is left out, as the SDKs never use it: `clone()` (throws) and `formData()`. Headers are read-only, as a
 * fetch Response's are.
 */
import type { IncomingHttpHeaders } from 'node:http';

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

  /** In name order, set-cookie once per cookie, as a fetch Headers iterates. */
  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.raw).sort()) {
      if (name === 'set-cookie') for (const c of this.getSetCookie()) yield [name, c];
      else yield [name, this.get(name) as string];
    }
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
