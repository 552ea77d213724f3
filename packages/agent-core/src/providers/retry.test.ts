import { describe, expect, it } from 'vitest';
import { abortableSleep, backoffDelay, DEFAULT_RETRY_POLICY } from './retry.js';

describe('backoffDelay', () => {
  it('doubles from 2 s, stays within [half, full] of the step, and is capped at 60 s', () => {
    const low = { ...DEFAULT_RETRY_POLICY, random: () => 0 };
    const high = { ...DEFAULT_RETRY_POLICY, random: () => 0.999999 };
    expect([1, 2, 3].map((n) => backoffDelay(n, low))).toEqual([1_000, 2_000, 4_000]);
    expect([1, 2, 3].map((n) => backoffDelay(n, high))).toEqual([2_000, 4_000, 8_000]);
    expect(backoffDelay(10, high)).toBe(60_000);
  });
});

describe('abortableSleep', () => {
  it('rejects immediately when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(abortableSleep(600_000, controller.signal)).rejects.toMatchObject({ kind: 'aborted' });
  });
});
