/**
 * Stage 5 — deliver: the recorded reply goes out (fenced, per chunk, out/send-reply.ts). What the send came to is
 * the turn's outcome so far; the reaction swap waits until the session is free again (TurnResult.afterAck).
 */
import type { TurnOutcomeKind, TurnResult } from '../../queue/turn-context.js';
import { sendReply, type CheckedReply, type SendOutcome } from '../../out/send-reply.js';
import type { OpenTurn } from './open.js';

/** What a send leaves the turn as: a stale reply was superseded (interrupted), a lost lock hands the turn over. */
const KIND_AFTER_SEND: Record<SendOutcome, TurnOutcomeKind> = {
  delivered: 'delivered',
  stale: 'interrupted',
  'lock lost': 'abandoned',
  'nothing to send': 'unknown',
};

export interface DeliverInput {
  text: string;
  /** The reply is an error text: ⚠️ instead of ✅ on the user's message. */
  failed?: boolean;
  /** The delivery check made before the reply was recorded, and the row that record returned. */
  checked?: CheckedReply;
  /** Compressions so far (they go into the outcome). */
  compressions: number;
}

export async function deliverReply(open: OpenTurn, input: DeliverInput): Promise<TurnResult> {
  const sent = await sendReply(open.target, input.text, input.checked);
  const outcome = { kind: KIND_AFTER_SEND[sent], compressions: input.compressions };
  if (sent !== 'delivered') {
    await open.live.close();
    return { afterAck: () => open.progress.clear(), outcome };
  }
  return { afterAck: () => open.progress.done(input.failed ?? false), outcome };
}
