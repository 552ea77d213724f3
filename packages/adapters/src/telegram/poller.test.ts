import { describe, expect, it } from 'vitest';
import { TELEGRAM_DEFAULT_WAITS } from './config.js';
import { networkWaitMs } from './poller.js';

describe('networkWaitMs', () => {
  it('backs off from 5 s to 60 s, then keeps retrying with waits up to 300 s', () => {
    const waits = Array.from({ length: 16 }, (_, i) => networkWaitMs(TELEGRAM_DEFAULT_WAITS, i) / 1000);
    expect(waits.slice(0, 6)).toEqual([5, 10, 20, 40, 60, 60]);
    expect(waits[9]).toBe(60);
    expect(waits.slice(10)).toEqual([300, 300, 300, 300, 300, 300]);
    expect(networkWaitMs(TELEGRAM_DEFAULT_WAITS, 10_000)).toBe(300_000);
  });
});
