import { describe, expect, it } from 'vitest';
import { abortable, settledWithin } from './settle.js';

describe('settle helpers', () => {
  it('abortable follows the step, or rejects with the reason as soon as the signal aborts', async () => {
    await expect(abortable(Promise.resolve(1), new AbortController().signal)).resolves.toBe(1);
    const stop = new AbortController();
    const never = new Promise<number>(() => undefined);
    const waiting = abortable(never, stop.signal);
    stop.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
    await expect(abortable(Promise.resolve(2), stop.signal)).rejects.toThrow('stopping');
    // A step that fails after the abort is not an unhandled rejection.
    await expect(abortable(Promise.reject(new Error('late')), stop.signal)).rejects.toThrow('stopping');
  });

  it('settledWithin says whether the promise resolved before the deadline', async () => {
    expect(await settledWithin(Promise.resolve(), 1_000)).toBe(true);
    expect(await settledWithin(new Promise(() => undefined), 5)).toBe(false);
  });
});
