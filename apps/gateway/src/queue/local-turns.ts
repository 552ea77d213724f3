/**
 * The turns running in this worker, and what a control signal (/stop, interrupt, steer, withdraw) or the end of a
 * shutdown's drain does to them: the one place that decides which running turns an abort reaches.
 */
import type { Logger } from '../support/logger.js';
import type { ControlSignal } from './control.js';
import { steerable, type RunningTurn } from './running-turn.js';
import { TurnAbort } from './turn-abort.js';

export class LocalTurns {
  /**
   * Every turn running here, in the order they started. Usually one per session; after a /stop broke a session's
   * lock, the stopped turn may still be winding down while another job runs the session's next turn (latestTurnOf names it).
   */
  readonly turns = new Set<RunningTurn>();
  /**
   * Sessions this worker holds between two turns (after an ack that named the next entry, before that turn runs):
   * a /stop landing there dropped that entry, so it is read again instead of run.
   */
  readonly between = new Map<string, { stopped: boolean }>();

  /** The drain is over: aborts the turns still running (their entries stay queued) and says which; returns how many. */
  cutShort(drainMs: number, log: Logger): number {
    const sessions = [...new Set([...this.turns].map((t) => t.sessionKey))];
    if (sessions.length === 0) return 0;
    log.warn(
      { sessions },
      `shutdown: the drain timeout (${drainMs} ms) passed; cutting short ${sessions.length} turn(s) of session(s) ${sessions.join(', ')}: their messages stay queued and run again`,
    );
    for (const t of this.turns) t.controller.abort(new TurnAbort('shutdown'));
    return sessions.length;
  }

  onSignal(s: ControlSignal): void {
    // A /stop breaks the lock first: a turn that took the session after it (fence above the stop's) is not stopped.
    if (s.type === 'stop') {
      const gap = this.between.get(s.sessionKey);
      if (gap) gap.stopped = true;
      for (const t of this.turns) if (t.sessionKey === s.sessionKey && (s.fence === undefined || t.fence < s.fence)) t.controller.abort(new TurnAbort('stop'));
      return;
    }
    const turn = this.latestTurnOf(s.sessionKey);
    if (!turn) return;
    if (turn.scheduled)
      return; // the message waits in the mailbox and runs as the next turn
    else if (s.type === 'interrupt' && turn.seq < s.seq) turn.controller.abort(new TurnAbort('interrupt'));
    else if (s.type === 'steer') {
      const steered = steerable(s.entry);
      if (steered) turn.steer.push(steered);
    } else if (s.type === 'withdraw' && turn.entryIds.has(s.entryId)) turn.controller.abort(new TurnAbort('stop'));
  }

  /** The session's newest turn here: what interrupt, steer and withdraw signals reach. */
  private latestTurnOf(sessionKey: string): RunningTurn | undefined {
    let latest: RunningTurn | undefined;
    for (const t of this.turns) if (t.sessionKey === sessionKey) latest = t;
    return latest;
  }
}
