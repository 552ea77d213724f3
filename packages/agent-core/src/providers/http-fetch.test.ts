import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyError } from './errors.js';
import { callerSignalOptions } from './http-fetch.js';
import { createTransport, type Transport } from './transport.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  closed: boolean;
}

const servers: Server[] = [];
const transports: Transport[] = [];
afterEach(async () => {
  for (const t of transports.splice(0)) t.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server that records each request (and whether its connection closed early) and answers with `answer`. */
async function server(answer: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const s = createServer((req, res) => {
    const entry: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '', closed: false };
    seen.push(entry);
    res.on('close', () => (entry.closed = !res.writableFinished));
    req.setEncoding('utf8');
    req.on('data', (d: string) => (entry.body += d));
    req.on('end', () => answer(req, res, entry));
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen };
}

function transport(): Transport {
  const t = createTransport();
  transports.push(t);
  return t;
}

const chunk = (text: string): string =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;

describe('the transport fetch (Node http client)', () => {
  it('streams a chat completion through the OpenAI SDK and leaves no listener on the caller signal', async () => {
    const llm = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk('Hel')}${chunk('lo')}data: [DONE]\n\n`);
    });
    const client = new OpenAI({ apiKey: 'k', baseURL: `${llm.url}/v1`, maxRetries: 0, fetch: transport().fetch });
    const caller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
      callerSignalOptions(caller.signal),
    );
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello');
    expect(JSON.parse(llm.seen[0].body)).toMatchObject({ model: 'm', stream: true });
    expect(llm.seen[0].headers.authorization).toBe('Bearer k');
    expect(llm.seen[0].headers['accept-encoding']).toBe('gzip, deflate');
    await expect.poll(() => getEventListeners(caller.signal, 'abort').length).toBe(0);
  });

  it('keeps the connection for the next request when the SDK stops reading after the last event', async () => {
    const llm = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunk('ok')}data: [DONE]\n\n`);
    });
    let connections = 0;
    servers[servers.length - 1].on('connection', () => connections++);
    const client = new OpenAI({ apiKey: 'k', baseURL: `${llm.url}/v1`, maxRetries: 0, fetch: transport().fetch });
    for (let i = 0; i < 10; i++) {
      const stream = await client.chat.completions.create({ model: 'm', messages: [], stream: true }, callerSignalOptions(new AbortController().signal));
      for await (const c of stream) expect(c.choices[0]?.delta?.content).toBe('ok');
    }
    expect(llm.seen).toHaveLength(10);
    // The next request may start while the last one's end marker is still on its way (then a second connection
    // opens, and the two take turns); cut after every stream, there would be ten.
    expect(connections).toBeLessThanOrEqual(3);
  });

  it('cuts the connection of a body that a reader gave up on and that does not end', async () => {
    const endless = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('more to come');
    });
    const res = await transport().fetch(`${endless.url}/x`);
    // As the SDKs read a body: its async iterator, then `return()` when they are done with it.
    const reader = (res.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    expect(new TextDecoder().decode((await reader.next()).value)).toBe('more to come');
    await reader.return?.();
    await expect.poll(() => endless.seen[0].closed, { timeout: 10_000 }).toBe(true);
  });

  it('aborts a stream in progress on the caller signal passed past the SDK, and the server sees the connection go', async () => {
    // The server sends one chunk and holds the stream open: only the abort ends the reading (the SDK ends a stream
    // quietly on an abort; the provider's guard turns that into an "aborted" failure, request.ts).
    const llm = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('first'));
    });
    const client = new OpenAI({ apiKey: 'k', baseURL: `${llm.url}/v1`, maxRetries: 0, fetch: transport().fetch });
    const caller = new AbortController();
    const stream = await client.chat.completions.create({ model: 'm', messages: [], stream: true }, callerSignalOptions(caller.signal));
    const got: string[] = [];
    for await (const c of stream) {
      got.push(c.choices[0]?.delta?.content ?? '');
      caller.abort(new Error('stop pressed'));
    }
    expect(got).toEqual(['first']);
    await expect.poll(() => llm.seen[0].closed).toBe(true);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('aborts before the answer starts, through either SDK', async () => {
    const silent = await server(() => undefined);
    const t = transport();
    const openai = new OpenAI({ apiKey: 'k', baseURL: `${silent.url}/v1`, maxRetries: 0, fetch: t.fetch });
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: silent.url, maxRetries: 0, fetch: t.fetch });
    const a = new AbortController();
    const first = openai.chat.completions.create({ model: 'm', messages: [], stream: true }, callerSignalOptions(a.signal));
    const b = new AbortController();
    const second = anthropic.messages.create(
      { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], stream: true },
      callerSignalOptions(b.signal),
    );
    await expect.poll(() => silent.seen.length).toBe(2);
    a.abort();
    b.abort();
    await expect(first).rejects.toThrow();
    await expect(second).rejects.toThrow();
    await expect.poll(() => silent.seen.every((s) => s.closed)).toBe(true);
  });

  it("keeps the SDK's own timeout: no answer in time is a timeout", async () => {
    const silent = await server(() => undefined);
    const client = new OpenAI({ apiKey: 'k', baseURL: `${silent.url}/v1`, maxRetries: 0, timeout: 200, fetch: transport().fetch });
    const err = await client.chat.completions.create({ model: 'm', messages: [] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(classifyError(err).kind).toBe('timeout');
  });

  it('decodes a gzip answer, keeps repeated headers apart, and gives a 204 no body', async () => {
    const api = await server((req, res) => {
      if (req.url === '/empty') return void res.writeHead(204, 'Nothing Here').end();
      res.writeHead(200, [
        ['content-type', 'application/json'],
        ['content-encoding', 'gzip'],
        ['set-cookie', 'a=1'],
        ['set-cookie', 'b=2'],
      ]);
      res.end(gzipSync(JSON.stringify({ ok: true })));
    });
    const { fetch } = transport();
    const res = await fetch(`${api.url}/json`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(await res.json()).toEqual({ ok: true });
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    const empty = await fetch(`${api.url}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.statusText).toBe('Nothing Here');
    expect(empty.body).toBeNull();
  });

  it('answers a reason phrase that a Response cannot hold with an empty status text, not a failure', async () => {
    const raw = createNetServer((socket) => socket.once('data', () => socket.end('HTTP/1.1 200 O\x01K\r\ncontent-length: 2\r\n\r\nhi')));
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    try {
      const res = await transport().fetch(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/`);
      expect([res.status, res.statusText, await res.text()]).toEqual([200, '', 'hi']);
    } finally {
      raw.close();
    }
  });

  it('follows a redirect and leaves a body that is not a string or bytes to fetch', async () => {
    const api = await server((req, res, seen) => {
      if (req.url === '/old') return void res.writeHead(307, { location: '/new' }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: seen.body.length, type: req.headers['content-type'] }));
    });
    const { fetch } = transport();
    const moved = await fetch(`${api.url}/old`, { method: 'POST', body: 'abc' });
    expect(await moved.json()).toEqual({ got: 3, type: 'text/plain;charset=UTF-8' });
    // Asked again through fetch, which follows it with the body.
    expect(api.seen.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual(['POST /old abc', 'POST /old abc', 'POST /new abc']);
    const form = new URLSearchParams({ file: 'hello' });
    const uploaded = (await (await fetch(`${api.url}/upload`, { method: 'POST', body: form })).json()) as { type: string };
    expect(uploaded.type).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(api.seen[3].body).toBe('file=hello');
  });

  it('sends a request again on a new connection when the server had closed the kept-alive one, but not when a new one fails', async () => {
    const connections = new Map<unknown, number>();
    let resetFresh = false;
    const api = await server((req, res) => {
      const n = (connections.get(req.socket) ?? 0) + 1;
      connections.set(req.socket, n);
      // A kept-alive connection's next request meets a server that is closing it (or, if asked, every request does).
      if (n > 1 || resetFresh) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`answer ${connections.size}`);
    });
    const { fetch } = transport();
    expect(await (await fetch(`${api.url}/a`, { method: 'POST', body: 'one' })).text()).toBe('answer 1');
    expect(await (await fetch(`${api.url}/a`, { method: 'POST', body: 'two' })).text()).toBe('answer 2');
    expect(api.seen.map((s) => s.body)).toEqual(['one', 'two', 'two']);
    resetFresh = true;
    // Now the kept-alive connection is cut (sent again), and so is the new one made for it: that fails the request.
    await expect(fetch(`${api.url}/a`, { method: 'POST', body: 'three' })).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(api.seen.map((s) => s.body)).toEqual(['one', 'two', 'two', 'three', 'three']);
    expect(connections.size).toBe(3);
  });

  it('reports a refused connection as a transport failure', async () => {
    const gone = await server(() => undefined);
    servers.pop()?.close();
    const client = new OpenAI({ apiKey: 'k', baseURL: `${gone.url}/v1`, maxRetries: 0, fetch: transport().fetch });
    const err = classifyError(
      await client.models.list().then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(err.kind).toBe('server_error');
    expect(err.transport).toBe(true);
  });
});
