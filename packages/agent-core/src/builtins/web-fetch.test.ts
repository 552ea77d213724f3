import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockedAddressError } from './address-guard.js';
import { MAX_FETCH_BYTES, createWebFetchTool, fetchUrl } from './web-fetch.js';

const signal = new AbortController().signal;
let server: Server;
let base = '';
/** Bytes the big endpoint managed to write before the client hung up. */
let bigWritten = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    const hop = /^\/hop\/(\d+)$/.exec(path);
    if (hop) {
      const n = Number(hop[1]);
      res.writeHead(302, { location: n === 0 ? '/page' : `/hop/${n - 1}` }).end();
    } else if (path === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><head><title>Hello</title><script>alert(1)</script></head><body><p>Hi &amp; welcome</p></body></html>');
    } else if (path === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    } else if (path === '/image') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(100));
    } else if (path === '/big') {
      // 8 MB, written as fast as the client reads; a client that stops at 2 MB leaves most of it unsent.
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      bigWritten = 0;
      const write = (): void => {
        while (bigWritten < 8 * 1024 * 1024) {
          bigWritten += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('web_fetch', () => {
  it('refuses loopback addresses unless private addresses are allowed (web-fetch-guard.test.ts has the rest)', async () => {
    await expect(createWebFetchTool().execute({ url: `${base}/page` }, { signal })).rejects.toThrow(BlockedAddressError);
  });

  it('fetches a local page as text when private addresses are allowed, following redirects', async () => {
    const tool = createWebFetchTool({ allowPrivate: true });
    expect(await tool.execute({ url: `${base}/hop/4` }, { signal })).toBe(
      `URL: ${base}/page\nStatus: 200 OK\nContent-Type: text/html\nTitle: Hello\n\nHi & welcome`,
    );
    expect(await tool.execute({ url: `${base}/json` }, { signal })).toContain('Content-Type: application/json\n\n{"ok":true}');
    expect(await tool.execute({ url: `${base}/image` }, { signal })).toContain('This is not a text document (100 bytes of image/png)');
    expect(await tool.execute({ url: `${base}/missing` }, { signal })).toContain('Status: 404 Not Found');
  });

  it('follows at most 5 redirects', async () => {
    await expect(fetchUrl(`${base}/hop/5`, { allowPrivate: true }, signal)).rejects.toThrow(/more than 5 redirects/);
  });

  it('stops reading at 2 MB instead of downloading the whole body', async () => {
    const page = await fetchUrl(`${base}/big`, { allowPrivate: true }, signal);
    expect(page.truncated).toBe(true);
    expect(page.body.length).toBe(MAX_FETCH_BYTES);
    await new Promise((r) => setTimeout(r, 100));
    expect(bigWritten).toBeLessThan(8 * 1024 * 1024);
    const out = await createWebFetchTool({ allowPrivate: true }).execute({ url: `${base}/big`, max_chars: 1000 }, { signal });
    expect(out).toContain('only its start was read');
    expect(out).toContain('[cut at 1000 characters');
  });

  it('rejects what is not an http URL', async () => {
    const tool = createWebFetchTool({ allowPrivate: true });
    await expect(tool.execute({ url: 'file:///etc/passwd' }, { signal })).rejects.toThrow(/only http and https/);
    await expect(tool.execute({ url: 'not a url' }, { signal })).rejects.toThrow(/not a valid URL/);
  });
});
