/** Why a running turn was aborted; the turn runner reads it from `signal.reason`. */
export class TurnAbort extends Error {
  constructor(readonly kind: 'interrupt' | 'stop' | 'shutdown' | 'lock_lost' | 'watchdog') {
    super(
      {
        interrupt: 'interrupted by a new message',
        stop: 'stopped by the user',
        shutdown: 'worker shutting down',
        lock_lost: 'session lock lost',
        watchdog: 'no agent activity for too long',
      }[kind],
    );
    this.name = 'TurnAbort';
  }
}
