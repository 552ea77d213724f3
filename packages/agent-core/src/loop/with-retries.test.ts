import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../providers/retry.js';
import { ProviderError } from '../providers/types.js';
import { withRetries } from './call-model.js';

const fast: RetryPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1, maxDelayMs: 4 };

describe('withRetries', () => {
  it('retries transient failures up to 3 times, announcing each, then gives up with the last error', async () => {
    let attempts = 0;
    const announced: number[] = [];
    const run = withRetries(
      async () => {
        attempts += 1;
        throw new ProviderError('server_error', `boom ${attempts}`, { status: 500 });
      },
      fast,
      { signal: new AbortController().signal, shouldRetry: () => true, onRetry: (_e, n) => announced.push(n) },
    );
    await expect(run).rejects.toThrow('boom 4');
    expect(attempts).toBe(4);
    expect(announced).toEqual([1, 2, 3]);
  });

  it('waits the server’s Retry-After instead of the backoff', async () => {
    const delays: number[] = [];
    let attempts = 0;
    const result = await withRetries(
      async () => {
        if (++attempts === 1) throw new ProviderError('overloaded', 'busy', { retryAfterMs: 7 });
        return 'ok';
      },
      fast,
      { signal: new AbortController().signal, shouldRetry: () => true, onRetry: (_e, _n, ms) => delays.push(ms) },
    );
    expect(result).toBe('ok');
    expect(delays).toEqual([7]);
  });

  it('does not wait out a Retry-After longer than 120 s', async () => {
    let attempts = 0;
    const run = withRetries(
      async () => {
        attempts += 1;
        throw new ProviderError('overloaded', 'come back in an hour', { retryAfterMs: 3_600_000 });
      },
      DEFAULT_RETRY_POLICY,
      { signal: new AbortController().signal, shouldRetry: () => true },
    );
    await expect(run).rejects.toThrow('come back in an hour');
    expect(attempts).toBe(1);
  });

  it('does not retry what shouldRetry refuses, and wraps foreign errors', async () => {
    let attempts = 0;
    const run = withRetries(
      async () => {
        attempts += 1;
        throw new TypeError('socket hang up');
      },
      fast,
      { signal: new AbortController().signal, shouldRetry: (e) => e.kind !== 'unknown' },
    );
    await expect(run).rejects.toMatchObject({ name: 'ProviderError', kind: 'unknown', message: 'socket hang up' });
    expect(attempts).toBe(1);
  });

  it('an abort during the backoff ends the wait at once', async () => {
    const controller = new AbortController();
    const slow = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 600_000, maxDelayMs: 600_000 };
    const run = withRetries(
      async () => {
        throw new ProviderError('server_error', 'down');
      },
      slow,
      { signal: controller.signal, shouldRetry: () => true, onRetry: () => controller.abort() },
    );
    await expect(run).rejects.toMatchObject({ kind: 'aborted' });
  });
});
