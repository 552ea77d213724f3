import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError, FileTooLargeError, NetworkError, NotFoundError } from '../errors.js';
import { downloadCapped } from './download.js';

const SECRET_PATH = '/file/bot123456:SECRET-token/photos/file_1.jpg';
let server: Server;
let base = '';
const served: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    served.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/declared-big') {
      res.writeHead(200, { 'content-length': '5000' });
      res.end(Buffer.alloc(5000));
    } else if (url.pathname === '/chunked-big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000));
      res.end();
    } else if (url.pathname === '/forbidden') {
      res.writeHead(403).end();
    } else if (url.pathname === '/html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>');
    } else if (url.pathname === SECRET_PATH) {
      res.writeHead(404).end();
    } else {
      res.writeHead(200, { 'content-type': 'image/png; charset=binary' }).end(Buffer.from('abc'));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('downloadCapped', () => {
  it('returns the bytes and the served type', async () => {
    const got = await downloadCapped({ platform: 'discord', url: `${base}/ok`, maxBytes: 100 });
    expect(got).toEqual({ bytes: Buffer.from('abc'), mimeType: 'image/png' });
  });

  it('refuses a file the platform already said is too big without asking for it', async () => {
    const before = served.length;
    const err = await downloadCapped({ platform: 'slack', url: `${base}/ok`, maxBytes: 100, knownSize: 101 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileTooLargeError);
    expect(err).toMatchObject({ size: 101, limitBytes: 100 });
    expect(served.length).toBe(before);
  });

  it('stops at a Content-Length over the cap, and at the cap while streaming when there is none', async () => {
    await expect(downloadCapped({ platform: 'discord', url: `${base}/declared-big`, maxBytes: 1000 })).rejects.toMatchObject({
      name: 'FileTooLargeError',
      size: 5000,
    });
    await expect(downloadCapped({ platform: 'discord', url: `${base}/chunked-big`, maxBytes: 2500 })).rejects.toBeInstanceOf(FileTooLargeError);
  });

  it('maps statuses to the shared errors, and an answer the platform marks as refused to AuthError', async () => {
    await expect(downloadCapped({ platform: 'discord', url: `${base}/forbidden`, maxBytes: 100 })).rejects.toBeInstanceOf(AuthError);
    const refused = downloadCapped({
      platform: 'slack',
      url: `${base}/html`,
      maxBytes: 100,
      refused: (r) => (r.headers.get('content-type') === 'text/html' ? 'sign-in page' : null),
    });
    await expect(refused).rejects.toBeInstanceOf(AuthError);
  });

  it('never puts the URL (which may hold a bot token) in an error', async () => {
    const notFound = await downloadCapped({ platform: 'telegram', url: `${base}${SECRET_PATH}`, maxBytes: 100 }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(NotFoundError);
    const unreachable = await downloadCapped({ platform: 'telegram', url: `http://127.0.0.1:9${SECRET_PATH}`, maxBytes: 100 }).catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(NetworkError);
    for (const err of [notFound, unreachable]) expect(String((err as Error).message) + String((err as Error).stack)).not.toContain('SECRET');
  });
});
