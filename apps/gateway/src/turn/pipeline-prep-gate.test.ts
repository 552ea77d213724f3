import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TurnContext, TurnRunner } from '../queue/worker.js';
import { inPrepGate } from './pipeline.js';
import { PREP_WAIT_TICK_MS, PrepGate } from './team-controls.js';

/** `run` inside the prep-gate policy, as the pipeline places it. */
const withPrepGate =
  (gate: PrepGate, run: TurnRunner): TurnRunner =>
  (ctx) =>
    inPrepGate(gate, ctx, run);

/** Just what withPrepGate reads of a turn's context. */
const ctxOf = (touch: () => void): TurnContext => ({ signal: new AbortController().signal, touch }) as unknown as TurnContext;

describe('withPrepGate', () => {
  afterEach(() => void vi.useRealTimers());

  it("a turn waiting for its place counts as active for the watchdog, and runs once the turn ahead's model request goes out", async () => {
    vi.useFakeTimers();
    const order: string[] = [];
    let sendFirstRequest!: () => void;
    const firstAsked = new Promise<void>((r) => (sendFirstRequest = r));
    const run = withPrepGate(new PrepGate(1), async (ctx) => {
      order.push('start');
      if (order.length === 1) {
        await firstAsked;
        ctx.prepared?.();
        order.push('first asked the model');
      }
    });
    const touched = { first: 0, second: 0 };
    const first = run(ctxOf(() => touched.first++));
    const second = run(ctxOf(() => touched.second++));
    await vi.advanceTimersByTimeAsync(3 * PREP_WAIT_TICK_MS);
    expect(order).toEqual(['start']);
    expect(touched).toEqual({ first: 0, second: 3 });
    sendFirstRequest();
    await Promise.all([first, second]);
    expect(order).toEqual(['start', 'first asked the model', 'start']);
  });
});
