import { describe, expect, it } from 'vitest';
import { RunningTurns, type RunningTurn } from './running-turns.js';
import { TurnAbort } from './turn-abort.js';

const KEY = 'agent:main:telegram:dm:1';

function turn(fence: number, seq: number, opts: { scheduled?: boolean; ids?: string[] } = {}): RunningTurn {
  return { seq, fence, entryIds: new Set(opts.ids ?? [`e${seq}`]), scheduled: opts.scheduled ?? false, lastActivity: 0, controller: new AbortController(), steer: [], absorbed: [] };
}
const why = (t: RunningTurn): string | undefined => (t.controller.signal.reason instanceof TurnAbort ? t.controller.signal.reason.kind : undefined);

describe('RunningTurns', () => {
  it('a /stop stops the turns under an older fence, not the one that took the session after it', () => {
    const turns = new RunningTurns();
    const stopped = turn(100, 1);
    const after = turn(300, 3, { scheduled: true });
    turns.add(KEY, stopped);
    turns.add(KEY, after);
    expect(turns.signal({ type: 'stop', sessionKey: KEY, fence: 200 })).toBe(true);
    expect([why(stopped), why(after)]).toEqual(['stop', undefined]);
    // Without a fence (an older publisher), every turn of the session stops.
    turns.signal({ type: 'stop', sessionKey: KEY });
    expect(why(after)).toBe('stop');
  });

  it('interrupts older turns, steers the newest, leaves scheduled runs alone, and forgets what ended', () => {
    const turns = new RunningTurns();
    const user = turn(100, 4);
    turns.add(KEY, user);
    turns.signal({ type: 'steer', sessionKey: KEY, entry: JSON.stringify({ id: 'e5', seq: 5, payload: { text: 'also' } }) });
    expect(user.steer.map((s) => s.entry.payload.text)).toEqual(['also']);
    turns.signal({ type: 'interrupt', sessionKey: KEY, seq: 4 });
    expect(why(user)).toBeUndefined();
    turns.signal({ type: 'interrupt', sessionKey: KEY, seq: 6 });
    expect(why(user)).toBe('interrupt');

    const task = turn(200, 7, { scheduled: true });
    turns.add(KEY, task);
    turns.signal({ type: 'interrupt', sessionKey: KEY, seq: 9 });
    turns.signal({ type: 'withdraw', sessionKey: KEY, entryId: 'e7' });
    expect(why(task)).toBeUndefined();

    expect(turns.size).toBe(2);
    turns.delete(KEY, user);
    turns.delete(KEY, task);
    turns.delete(KEY, task);
    expect([turns.size, turns.has(KEY), turns.signal({ type: 'stop', sessionKey: KEY })]).toEqual([0, false, false]);
  });
});
