import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { TELEGRAM_MAX_SOCKETS, TelegramApi, normalizeApiRoot, telegramAgent } from './api.js';

describe('normalizeApiRoot', () => {
  it('keeps a path prefix by ending it with a slash (telegraf would drop it otherwise)', () => {
    expect(normalizeApiRoot('http://127.0.0.1:8081/telegram')).toBe('http://127.0.0.1:8081/telegram/');
    expect(normalizeApiRoot('http://127.0.0.1:8081/telegram/')).toBe('http://127.0.0.1:8081/telegram/');
  });

  it('leaves a bare host as it is', () => {
    expect(normalizeApiRoot('https://api.telegram.org')).toBe('https://api.telegram.org');
    expect(normalizeApiRoot('https://api.telegram.org/')).toBe('https://api.telegram.org');
  });
});

describe('TelegramApi calls on a long-lived signal', () => {
  it('leave nothing behind on it, call after call (no listeners, no memory growing with the number of calls)', async () => {
    const api = new TelegramApi({ token: '1:test', logger: pino({ level: 'silent' }) });
    // No network: the point is what each call ties to the signal, not the request.
    (api as unknown as { json: { call: () => Promise<unknown> } }).json.call = async () => ({ id: 1 });
    const lifetime = new AbortController(); // the poller's: lives as long as the ingress
    const calls = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await api.call('getMe', {}, lifetime.signal);
    };
    await calls(2_000);
    const before = heapAfterGc();
    await calls(30_000);
    const grown = heapAfterGc() - before;
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
    // AbortSignal.any kept about 0.5 KB per call reachable from the long-lived signal (15 MB here).
    expect(grown).toBeLessThan(4 * 1024 * 1024);
  });
});

function heapAfterGc(): number {
  setFlagsFromString('--expose_gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('TelegramApi connections', () => {
  it('reuses at most TELEGRAM_MAX_SOCKETS connections to one Bot API server, however many calls are in flight', async () => {
    let connections = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    const server = createServer((_req, res) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      // Answered on the next turn of the loop, so the calls pile up as they would behind a busy server.
      setImmediate(() => {
        inFlight--;
        const body = JSON.stringify({ ok: true, result: { id: 1, is_bot: true, first_name: 'b', username: 'b' } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      // Two bots on one server share the pool (ingress, egress and files of a bot are three clients each).
      const apis = ['1:a', '2:b'].map((token) => new TelegramApi({ token, apiRoot: `http://127.0.0.1:${port}`, logger: pino({ level: 'silent' }) }));
      const burst = (): Promise<unknown[]> => Promise.all(Array.from({ length: 3 * TELEGRAM_MAX_SOCKETS }, (_, i) => apis[i % 2].call('getMe', {})));
      expect(await burst()).toHaveLength(3 * TELEGRAM_MAX_SOCKETS);
      expect(connections).toBeLessThanOrEqual(TELEGRAM_MAX_SOCKETS);
      expect(mostInFlight).toBeLessThanOrEqual(TELEGRAM_MAX_SOCKETS);
      // The next burst goes over the connections kept open.
      const opened = connections;
      await burst();
      expect(connections).toBe(opened);
      expect(telegramAgent(`http://127.0.0.1:${port}`)).toBe(telegramAgent('http://localhost:8081'));
      expect(telegramAgent('https://api.telegram.org')).not.toBe(telegramAgent('http://localhost:8081'));
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("closes an idle connection itself before the server's announced keep-alive timeout, so no call goes out on one the server is closing", async () => {
    const server = createServer((_req, res) => {
      const body = JSON.stringify({ ok: true, result: true });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    // Announced as `Keep-Alive: timeout=2`; the client lets a connection idle 1 s at most (Node keeps a second's margin).
    server.keepAliveTimeout = 2_000;
    let closedBy = '';
    server.on('connection', (socket) => {
      // The client's FIN arrives as 'end'; a socket the server's own timer closes just closes.
      socket.once('end', () => (closedBy ||= 'client'));
      socket.once('close', () => (closedBy ||= 'server'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const api = new TelegramApi({ token: '3:c', apiRoot: `http://127.0.0.1:${port}`, logger: pino({ level: 'silent' }) });
      expect(await api.call('deleteWebhook', {})).toBe(true);
      await expect.poll(() => closedBy, { timeout: 10_000 }).not.toBe('');
      expect(closedBy).toBe('client');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
