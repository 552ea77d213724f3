import { afterEach, describe, expect, it, vi } from 'vitest';
import { PREP_WAIT_TICK_MS, PrepGate } from './team-controls.js';

const open = new AbortController().signal;

describe('PrepGate', () => {
  it('lets `limit` turns in at once and the rest in their order, each as a place is given up', async () => {
    const gate = new PrepGate(2);
    const [a, b] = [await gate.enter(open), await gate.enter(open)];
    const admitted: string[] = [];
    const c = gate.enter(open).then((r) => (admitted.push('c'), r));
    const d = gate.enter(open).then((r) => (admitted.push('d'), r));
    await Promise.resolve();
    expect(gate.load).toEqual({ inside: 2, waiting: 2 });
    expect(admitted).toEqual([]);
    a();
    const releaseC = await c;
    expect(admitted).toEqual(['c']);
    // A release counts once, however often it is called.
    a();
    await Promise.resolve();
    expect(admitted).toEqual(['c']);
    b();
    (await d)();
    releaseC();
    expect(gate.load).toEqual({ inside: 0, waiting: 0 });
  });

  it('a turn that newly arrives does not pass the ones already waiting', async () => {
    const gate = new PrepGate(1);
    const first = await gate.enter(open);
    const order: string[] = [];
    const waiting = gate.enter(open).then((r) => (order.push('waiting'), r));
    first();
    const late = gate.enter(open).then((r) => (order.push('late'), r));
    (await waiting)();
    (await late)();
    expect(order).toEqual(['waiting', 'late']);
  });

  it('a waiting turn that is aborted leaves the line with the reason, and its place goes to the next', async () => {
    const gate = new PrepGate(1);
    const held = await gate.enter(open);
    const stop = new AbortController();
    const stopped = gate.enter(stop.signal);
    const next = gate.enter(open);
    stop.abort(new Error('turn stopped'));
    await expect(stopped).rejects.toThrow('turn stopped');
    expect(gate.load).toEqual({ inside: 1, waiting: 1 });
    held();
    (await next)();
    expect(gate.load).toEqual({ inside: 0, waiting: 0 });
    // An aborted turn gets no place, even a free one.
    await expect(gate.enter(stop.signal)).rejects.toThrow('turn stopped');
    expect(gate.load).toEqual({ inside: 0, waiting: 0 });
  });

  describe('with fake timers', () => {
    afterEach(() => void vi.useRealTimers());

    it('tells each waiting turn it is alive every tick (its watchdog), and keeps no timer once the line is empty', async () => {
      vi.useFakeTimers();
      const gate = new PrepGate(1);
      const held = await gate.enter(open);
      const heard = { a: 0, b: 0 };
      const stop = new AbortController();
      const a = gate.enter(open, () => heard.a++);
      const b = gate.enter(stop.signal, () => heard.b++);
      await vi.advanceTimersByTimeAsync(3 * PREP_WAIT_TICK_MS);
      expect(heard).toEqual({ a: 3, b: 3 });
      stop.abort(new Error('turn stopped'));
      await expect(b).rejects.toThrow('turn stopped');
      await vi.advanceTimersByTimeAsync(PREP_WAIT_TICK_MS);
      expect(heard).toEqual({ a: 4, b: 3 });
      held();
      const releaseA = await a;
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(5 * PREP_WAIT_TICK_MS);
      expect(heard).toEqual({ a: 4, b: 3 });
      releaseA();
      expect(gate.load).toEqual({ inside: 0, waiting: 0 });
    });
  });

  it('refuses a limit below one', () => {
    expect(() => new PrepGate(0)).toThrow(/at least 1/);
  });
});
