import { describe, expect, it } from 'vitest';
import { HandOverMemory, within } from './hand-overs.js';

describe('HandOverMemory', () => {
  it('gives a redelivery the running hand-over, keeps a successful one, forgets a failed one', async () => {
    const memory = new HandOverMemory<string>(10);
    let finish: () => void = () => {};
    const running = memory.remember('a', new Promise<void>((resolve) => (finish = resolve)));
    expect(memory.get('a')).toBe(running);
    finish();
    await running;
    expect(memory.get('a')).toBe(running);

    const failing = memory.remember('b', Promise.reject(new Error('redis down')));
    await expect(failing).rejects.toThrow('redis down');
    expect(memory.get('b')).toBeUndefined();
  });

  it('keeps a newer hand-over of the same key when an older one fails late', async () => {
    const memory = new HandOverMemory<string>(10);
    let fail: (err: Error) => void = () => {};
    const old = memory.remember('a', new Promise<void>((_, reject) => (fail = reject)));
    const newer = memory.remember('a', Promise.resolve());
    fail(new Error('late'));
    await expect(old).rejects.toThrow('late');
    expect(memory.get('a')).toBe(newer);
  });

  it('forgets the oldest beyond its capacity', () => {
    const memory = new HandOverMemory<number>(2);
    for (const k of [1, 2, 3]) memory.remember(k, Promise.resolve());
    expect([memory.get(1), memory.size]).toEqual([undefined, 2]);
    expect(() => new HandOverMemory(0)).toThrow(RangeError);
  });
});

describe('within', () => {
  it('answers with the outcome when it comes in time, else with the stand-in, leaving the work running', async () => {
    expect(await within(Promise.resolve('taken'), 1_000, 'late')).toBe('taken');
    let finish: (v: string) => void = () => {};
    const work = new Promise<string>((resolve) => (finish = resolve));
    expect(await within(work, 10, 'late')).toBe('late');
    finish('taken later');
    expect(await work).toBe('taken later');
    await expect(within(Promise.reject(new Error('no')), 1_000, 'late')).rejects.toThrow('no');
  });
});
