import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { TelegramApi, normalizeApiRoot } from './api.js';

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
    (api.telegram as unknown as { callApi: () => Promise<unknown> }).callApi = async () => ({ id: 1 });
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
