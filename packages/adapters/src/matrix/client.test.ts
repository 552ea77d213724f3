import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkError, RateLimitedError } from '../errors.js';
import { MatrixClient, Method } from './client.js';

let server: Server;
let url = '';
let answer: { status: number; body: string } = { status: 200, body: '{}' };

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.includes('/hang')) return; // never answers
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('MatrixClient', () => {
  it('leaves no timer or abort listener behind per call (the SDK’s localTimeoutMs would leave one each)', async () => {
    const client = new MatrixClient({ homeserverUrl: url, accessToken: 'syt_x', userId: '@b:hs' });
    const outer = new AbortController();
    answer = { status: 200, body: '{"next_batch":"s1"}' };
    await client.call('sync', Method.Get, '/sync', { signal: outer.signal });
    const before = timers();
    for (let i = 0; i < 200; i++) await client.call('sync', Method.Get, '/sync', { signal: outer.signal, timeoutMs: 60_000 });
    // Other timers of the process (the HTTP keep-alive) may come and go; 200 left-behind ones could not.
    expect(timers()).toBeLessThanOrEqual(before);
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
  });

  it('maps M_LIMIT_EXCEEDED to a rate limit with its wait, and a call with no answer to a NetworkError at its deadline', async () => {
    const client = new MatrixClient({ homeserverUrl: url, accessToken: 'syt_x', userId: '@b:hs' });
    answer = { status: 429, body: '{"errcode":"M_LIMIT_EXCEEDED","error":"slow down","retry_after_ms":1234}' };
    const limited = await client.call('send', Method.Put, '/rooms/x/send/m.room.message/t', { body: {} }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect((limited as RateLimitedError).retryAfterMs).toBe(1234);
    // A wait that is no number (an object Number() cannot even convert) is no wait: the default one, not a TypeError.
    answer = { status: 429, body: '{"errcode":"M_LIMIT_EXCEEDED","error":"slow down","retry_after_ms":{"toString":0}}' };
    const odd = await client.call('send', Method.Put, '/rooms/x/send/m.room.message/t2', { body: {} }).catch((e: unknown) => e);
    expect(odd).toBeInstanceOf(RateLimitedError);
    expect((odd as RateLimitedError).retryAfterMs).toBe(2_000);
    const hung = await client.call('hang', Method.Get, '/hang', { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(hung).toBeInstanceOf(NetworkError);
    expect(String(hung)).not.toContain('syt_x');
  });
});
