/**
 * The turns one worker process is running, by session, and where control signals go.
 *
 * Usually a session has at most one turn here. After its lock was broken (/stop, expiry), a turn still winding
 * down can share the session with the turn of whoever took it next — in this same process too — so each session
 * has a list, and a signal reaches exactly the turns it is meant for: a /stop stops the turns under a fence older
 * than its own, never a turn that took the session after it; a steer goes to the newest turn.
 */
import type { ControlSignal } from './control.js';
import type { MailboxEntry } from './mailbox.js';
import { TurnAbort } from './turn-abort.js';

export interface RunningTurn {
  seq: number;
  /** The fencing token the turn runs under (see Mailbox). */
  fence: number;
  /** Ids of the entries the turn answers (a withdrawal names one). */
  entryIds: Set<string>;
  /** A scheduled task's run: a user's message neither interrupts nor steers it (it queues behind it). */
  scheduled: boolean;
  lastActivity: number;
  controller: AbortController;
  steer: Array<{ raw: string; entry: MailboxEntry }>;
  absorbed: string[];
}

export class RunningTurns {
  private readonly bySession = new Map<string, RunningTurn[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  sessions(): string[] {
    return [...this.bySession.keys()];
  }

  all(): RunningTurn[] {
    return [...this.bySession.values()].flat();
  }

  has(sessionKey: string): boolean {
    return this.bySession.has(sessionKey);
  }

  add(sessionKey: string, turn: RunningTurn): void {
    const list = this.bySession.get(sessionKey);
    if (list) list.push(turn);
    else this.bySession.set(sessionKey, [turn]);
    this.count++;
  }

  delete(sessionKey: string, turn: RunningTurn): void {
    const list = this.bySession.get(sessionKey);
    const at = list?.indexOf(turn) ?? -1;
    if (!list || at < 0) return;
    list.splice(at, 1);
    this.count--;
    if (list.length === 0) this.bySession.delete(sessionKey);
  }

  /** Routes a control signal to the turns of its session it concerns; false when the session has none here. */
  signal(s: ControlSignal): boolean {
    const list = this.bySession.get(s.sessionKey);
    if (!list) return false;
    if (s.type === 'steer') {
      const newest = list[list.length - 1];
      if (!newest.scheduled) newest.steer.push({ raw: s.entry, entry: JSON.parse(s.entry) as MailboxEntry });
      return true;
    }
    for (const turn of [...list]) {
      if (s.type === 'stop') {
        if (s.fence === undefined || turn.fence < s.fence) turn.controller.abort(new TurnAbort('stop'));
      } else if (turn.scheduled) continue; // the message waits in the mailbox and runs as the next turn
      else if (s.type === 'interrupt' && turn.seq < s.seq) turn.controller.abort(new TurnAbort('interrupt'));
      else if (s.type === 'withdraw' && turn.entryIds.has(s.entryId)) turn.controller.abort(new TurnAbort('stop'));
    }
    return true;
  }
}
