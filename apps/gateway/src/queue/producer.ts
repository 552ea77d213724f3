/**
 * The ingress side of the queue: puts a routed message in its session's mailbox and on BullMQ, and applies the
 * busy-input mode when the session is already running a turn.
 */
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.js';
import type { ControlBus } from './control.js';
import type { EnqueueResult, Mailbox, TurnPayload } from './mailbox.js';

export type BusyInputMode = 'interrupt' | 'queue' | 'steer';

/** Pending messages per session in queue and steer modes (the running one not counted). */
export const MAX_PENDING = 32;
/** Interrupt mode merges what is pending, so its mailbox stays short; this only bounds abuse. */
const MAX_MAILBOX_INTERRUPT = 100;
/** Retries of a failed turn job; the work is idempotent (mailbox head + outbox), so retrying is always safe. */
const JOB_ATTEMPTS = 8;
const JOB_BACKOFF = { type: 'exponential', delay: 1_000 } as const;
/** At most one "queued" acknowledgement per session per window. */
export const QUEUED_ACK_WINDOW_S = 30;

export interface TurnJobData {
  sessionKey: string;
  /** The mailbox entry exactly as stored (the worker looks for it by value). */
  entry: string;
}

export type SubmitResult = EnqueueResult & {
  /** Set when the caller should tell the user their message waits (queue mode, at most once per 30 s). */
  acknowledge?: boolean;
};

/**
 * BullMQ forbids ':' in custom job ids, so `<platform>:<message id>` is spelt with dots:
 * `telegram.-1001.55`, `slack.C1.1700000000.000100`, `discord.1234567890`.
 */
export function jobIdFor(platform: string, messageId: string): string {
  return `${platform}.${messageId.replaceAll(':', '.')}`;
}

export class TurnProducer {
  constructor(
    private readonly queue: Queue<TurnJobData>,
    private readonly mailbox: Mailbox,
    private readonly control: ControlBus,
    private readonly log: Logger,
  ) {}

  async submit(sessionKey: string, payload: TurnPayload, mode: BusyInputMode): Promise<SubmitResult> {
    const id = jobIdFor(payload.platform, payload.messageId);
    const cap = mode === 'interrupt' ? MAX_MAILBOX_INTERRUPT : MAX_PENDING + 1;
    const res = await this.mailbox.enqueue(id, sessionKey, payload, cap);
    if (res.status !== 'queued') {
      this.log.debug({ jobId: id, sessionKey, status: res.status }, 'message not enqueued');
      return res;
    }
    // A job that fails (Redis blinked during ack, say) must run again, or its mailbox entry could be stranded.
    await this.queue.add('turn', { sessionKey, entry: res.entry as string }, { jobId: id, attempts: JOB_ATTEMPTS, backoff: JOB_BACKOFF });

    if (!res.busy || res.position <= 1) return res;
    switch (mode) {
      case 'interrupt': {
        // In a shared session (a thread) one person must not cancel the answer another is waiting for:
        // only the author of the running turn interrupts it; anyone else's message waits its turn.
        const running = await this.mailbox.head(sessionKey);
        if (running && running.entry.payload.userId !== payload.userId) return res;
        await this.mailbox.markInterrupt(sessionKey, res.seq);
        await this.control.publish({ type: 'interrupt', sessionKey, seq: res.seq });
        return res;
      }
      case 'steer':
        await this.control.publish({ type: 'steer', sessionKey, entry: res.entry as string });
        return res;
      case 'queue':
        return { ...res, acknowledge: await this.mailbox.mayAcknowledge(sessionKey, QUEUED_ACK_WINDOW_S) };
    }
  }
}
