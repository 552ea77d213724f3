/**
 * A message its sender took back (the HTTP API's client hung up: Mailbox.withdraw, then a `withdraw` control signal)
 * is withdrawn wherever it is: a turn that has not run is skipped (worker.ts), a running one is stopped like /stop,
 * and what the stopped turn did is not kept for the model (turn/stages/record.ts): the question never reaches a later
 * model request, where it would be merged with the next one (history never has two user messages in a row).
 */
import type { MailboxEntry } from './mailbox.js';
import { TurnAbort } from './turn-abort.js';

/** The outbox row's reason for a turn its sender took back. */
export const WITHDRAWN_REASON = 'withdrawn by its sender';

/**
 * Whether a turn that ended on `abort` answered only messages that wait for an answer of their own (the API's) and
 * was stopped: its client went away, or an operator stopped it; either way nobody got an answer to its question.
 */
export function isWithdrawnTurn(entries: readonly MailboxEntry[], abort: unknown): boolean {
  return abort instanceof TurnAbort && abort.kind === 'stop' && entries.length > 0 && entries.every((e) => e.payload.withdrawable === true);
}
