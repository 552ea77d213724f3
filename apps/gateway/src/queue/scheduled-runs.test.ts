/**
 * A scheduled task's due run in a chat's mailbox, with real Redis and BullMQ: it queues behind the user's running
 * turn in every busy-input mode, is a turn of its own (never merged, interrupted or steered), keeps its right to
 * deliver, survives /stop while it waits, and is queued once however often it is submitted.
 */
import { describe, expect, it } from 'vitest';
import { ControlBus } from './control.js';
import type { TurnPayload } from './mailbox.js';
import type { BusyInputMode } from './producer.js';
import { TurnAbort, type TurnContext } from './worker.js';
import { keyOf, payload, rig, until } from './test-support.js';

const task = (session: number, runAt = 1_000): TurnPayload => ({
  ...payload(session, 0, 'task'),
  platformMessageId: undefined,
  messageId: `schedule.t1.${runAt}`,
  scheduled: { id: 't1', session: 'own', runAt },
});

/**
 * A runner that records each turn's texts, how it ended and whether it may deliver; holds turns named in `hold`
 * until released (or aborted, unless `windDown`: then an aborted turn still waits for its release, as a slow turn
 * winding down would, so a test can queue more behind it first).
 */
function recorder(hold: Set<string>, windDown = false) {
  const seen: string[] = [];
  const ended: Array<[string, string, boolean]> = [];
  const release = new Map<string, () => void>();
  const runTurn = async (ctx: TurnContext): Promise<void> => {
    const text = ctx.entries.map((e) => e.payload.text).join('+');
    seen.push(text);
    if (hold.has(text)) {
      await new Promise<void>((resolve) => {
        release.set(text, resolve);
        if (!windDown) ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    const reason: unknown = ctx.signal.reason;
    ended.push([text, reason instanceof TurnAbort ? reason.kind : 'done', await ctx.canDeliver()]);
  };
  const releaseTurn = async (text: string): Promise<void> => {
    await until(() => release.has(text));
    release.get(text)?.();
  };
  return { seen, ended, runTurn, releaseTurn };
}

describe.each<BusyInputMode>(['interrupt', 'queue', 'steer'])('a scheduled run in %s mode', (mode) => {
  it("waits behind the user's running turn, runs as a turn of its own, and may deliver", async () => {
    const r = recorder(new Set(['a']));
    const { producer } = await rig({ workers: 2, mode, runTurn: r.runTurn });
    await producer.submit(keyOf(1), payload(1, 1, 'a'), mode);
    await until(() => r.seen.length === 1);
    expect((await producer.submitScheduled(keyOf(1), task(1))).status).toBe('queued');
    await r.releaseTurn('a');
    await until(() => r.ended.length === 2);
    expect(r.ended).toEqual([
      ['a', 'done', true],
      ['task', 'done', true],
    ]);
  });

  it("is neither interrupted nor steered by the user's message, which runs after it", async () => {
    const r = recorder(new Set(['task']));
    const { producer } = await rig({ workers: 2, mode, runTurn: r.runTurn });
    await producer.submitScheduled(keyOf(2), task(2));
    await until(() => r.seen.length === 1);
    const sent = await producer.submit(keyOf(2), payload(2, 1, 'b'), mode);
    // Interrupt mode tells the user their message waits (a reminder is not cancelled by chatting).
    if (mode !== 'steer') expect(sent).toMatchObject({ status: 'queued', acknowledge: true });
    await r.releaseTurn('task');
    await until(() => r.ended.length === 2);
    expect(r.ended).toEqual([
      ['task', 'done', true],
      ['b', 'done', true],
    ]);
  });
});

describe("scheduled runs and the user's messages", () => {
  it("interrupt mode: the user's messages are merged around a waiting run, which keeps its place and may still deliver", async () => {
    const r = recorder(new Set(['a']), true);
    const { producer } = await rig({ workers: 1, mode: 'interrupt', runTurn: r.runTurn });
    await producer.submit(keyOf(3), payload(3, 1, 'a'), 'interrupt');
    await until(() => r.seen.length === 1);
    await producer.submit(keyOf(3), payload(3, 2, 'b'), 'interrupt');
    await producer.submitScheduled(keyOf(3), task(3));
    await producer.submit(keyOf(3), payload(3, 3, 'c'), 'interrupt');
    await r.releaseTurn('a');
    await until(() => r.ended.length === 3);
    // 'a' was interrupted; 'b' and 'c' answered together; the run, queued between them, was not made stale.
    expect(r.ended).toEqual([
      ['a', 'interrupt', false],
      ['b+c', 'done', true],
      ['task', 'done', true],
    ]);
  });

  it("/stop ends the user's turn and drops their queued messages, but keeps a waiting run, which then runs", async () => {
    const r = recorder(new Set(['a']));
    const { producer, mailbox, redis, prefix } = await rig({ workers: 1, mode: 'queue', runTurn: r.runTurn });
    await producer.submit(keyOf(4), payload(4, 1, 'a'), 'queue');
    await until(() => r.seen.length === 1);
    await producer.submit(keyOf(4), payload(4, 2, 'b'), 'queue');
    await producer.submitScheduled(keyOf(4), task(4));
    const stopped = await mailbox.stop(keyOf(4));
    expect(stopped).toMatchObject({ wasBusy: true, dropped: 1 });
    // As /stop does; the waiting run may take the session before the signal arrives, and must not be stopped by it.
    await new ControlBus(redis, null, prefix).publish({ type: 'stop', sessionKey: keyOf(4), fence: stopped.fence });
    await until(() => r.ended.length === 2);
    // In either order: the run may take the session (the lock is broken) before the stopped turn winds down.
    expect([...r.ended].sort(([x], [y]) => x.localeCompare(y))).toEqual([
      ['a', 'stop', false],
      ['task', 'done', true],
    ]);
  });

  it('a run submitted twice (a job handled again after a crash) is queued once', async () => {
    const r = recorder(new Set());
    const { producer } = await rig({ workers: 1, mode: 'queue', runTurn: r.runTurn });
    expect((await producer.submitScheduled(keyOf(5), task(5, 42))).status).toBe('queued');
    expect((await producer.submitScheduled(keyOf(5), task(5, 42))).status).toBe('duplicate');
    // The next run of the same task is another entry.
    expect((await producer.submitScheduled(keyOf(5), task(5, 43))).status).toBe('queued');
    await until(() => r.ended.length === 2);
    expect(r.seen).toEqual(['task', 'task']);
  });
});
