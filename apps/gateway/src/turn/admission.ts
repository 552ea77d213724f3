/**
 * What a turn waits for before it runs: its profile's concurrent-turn slot (team controls), then a place among
 * the turns preparing their first model request (prep-gate.ts). Two policies of turn/pipeline.ts, in that order.
 */
import type { TurnContext, TurnResult, TurnRunner } from '../queue/worker.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';
import type { PrepGate } from './prep-gate.js';
import type { TeamControls } from './team-controls.js';

type Run = (ctx: TurnContext) => Promise<TurnResult | void>;

/** The profile's concurrent-turn limit: the turn waits for a slot (its watchdog sees the wait as activity). */
export async function inTurnSlot(controls: TeamControls, ctx: TurnContext, run: Run): Promise<TurnResult | void> {
  const sem = controls.turnSlots(ctx.entries[0].payload.profile ?? DEFAULT_PROFILE);
  if (!sem) return run(ctx);
  const slot = await sem.acquire(ctx.signal, ctx.touch);
  try {
    return await run(ctx);
  } finally {
    await slot.release();
  }
}

/**
 * A place among the preparing turns, given up when the turn's first model request goes out (`ctx.prepared`) or
 * when the turn ends without one. Inside the turn slot, so a turn holding a place never waits for another turn.
 * Waiting in line counts as activity for the watchdog, as waiting for a turn slot does.
 */
export async function inPrepGate(gate: PrepGate, ctx: TurnContext, run: Run): Promise<TurnResult | void> {
  const release = await gate.enter(ctx.signal, ctx.touch);
  try {
    return await run({ ...ctx, prepared: release });
  } finally {
    release();
  }
}

/** `run` inside inPrepGate (the pipeline calls inPrepGate itself). */
export function withPrepGate(gate: PrepGate, run: TurnRunner): TurnRunner {
  return (ctx) => inPrepGate(gate, ctx, run);
}
