/**
 * The ingress side of the queue: puts a routed message in its session's mailbox and on BullMQ, and applies the
 * busy-input mode when the session is already running a turn.
 */
import type { InboundMessage } from '@herald/adapters';
import type { Queue } from 'bullmq';
import type { Logger } from '../support/logger.js';
import { isPartOf } from './parts.js';
import type { ControlBus } from './control.js';
import type { EnqueueResult, Mailbox, TurnPayload } from './mailbox.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';

/** What a turn needs of an inbound message (plain JSON, stored in the mailbox): the payload `submit` is given. */
export function payloadFrom(msg: InboundMessage, profile?: string): TurnPayload {
  return {
    ...(profile !== undefined && profile !== DEFAULT_PROFILE ? { profile } : {}),
    ...(msg.account !== undefined ? { account: msg.account } : {}),
    ...(msg.spaceId !== undefined ? { spaceId: msg.spaceId } : {}),
    text: msg.text,
    platform: msg.platform,
    conversationId: msg.conversationId,
    chatType: msg.chatType,
    chatId: msg.chatId,
    threadId: msg.threadId,
    userId: msg.userId,
    userName: msg.userName,
    messageId: msg.messageId,
    platformMessageId: msg.platformMessageId,
    quoted: msg.quoted,
    attachments: msg.attachments.length ? msg.attachments : undefined,
    ...(msg.partOf !== undefined && { partOf: msg.partOf }),
  };
}

export type BusyInputMode = 'interrupt' | 'queue' | 'steer';

/** Pending messages per session in queue and steer modes (the running one not counted). */
export const MAX_PENDING = 32;
/** Interrupt mode merges what is pending, so its mailbox stays short; this only bounds abuse. */
const MAX_MAILBOX_INTERRUPT = 100;
/** Retries of a failed turn job; the work is idempotent (mailbox head + outbox), so retrying is always safe. */
export const JOB_ATTEMPTS = 8;
export const JOB_BACKOFF = { type: 'exponential', delay: 1_000 } as const;
/**
 * How long finished jobs stay in Redis, for the dashboard and the admin API. A job is only a wake-up call (the
 * mailbox keeps the message, and an entry left without a job is woken by the janitor), so nothing depends on
 * them: failed jobs are capped by count as well as age, so an outage that fails thousands of jobs cannot fill
 * Redis. Used as the job options and the worker's defaults alike.
 */
export const JOB_RETENTION = {
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 3 * 24 * 3600, count: 1_000 },
} as const;
/** At most one "queued" acknowledgement per session per window. */
const QUEUED_ACK_WINDOW_S = 30;

/**
 * What a job carries: which session has mail and which entry the job was added for — never the message itself.
 * The mailbox entry holds the payload; keeping it out of the job keeps message text out of BullMQ's completed
 * and failed sets (and out of the dashboard).
 */
export interface TurnJobData {
  sessionKey: string;
  /** The entry's id (platform + message id) and arrival number; see Mailbox.holds. */
  entryId: string;
  seq: number;
}

export type SubmitResult = EnqueueResult & {
  /** Set when the caller should tell the user their message waits (queue mode, at most once per 30 s). */
  acknowledge?: boolean;
};

/**
 * BullMQ forbids ':' in custom job ids, so `<platform>:<message id>` is spelt with dots:
 * `telegram.-1001.55`, `slack.C1.1700000000.000100`, `discord.1234567890`. This is also the mailbox entry's id
 * (the key of its redelivery memory) and the turn id of the outbox.
 */
export function jobIdFor(platform: string, messageId: string): string {
  return `${platform}.${messageId.replaceAll(':', '.')}`;
}

/**
 * One redelivery authority: the mailbox's `seen` key, set atomically with the append, decides whether a platform
 * message is new (see SEEN_AFTER_DONE_S). The BullMQ job id follows that decision instead of holding its own
 * window: it names the accepted entry (message id + arrival number), so every entry the mailbox accepts gets its
 * job at once, and a job kept in the completed or failed set never swallows a later, accepted redelivery.
 */
export function entryJobId(entryId: string, seq: number): string {
  return `${entryId}.${seq}`;
}

export class TurnProducer {
  constructor(
    private readonly queue: Queue<TurnJobData>,
    private readonly mailbox: Mailbox,
    private readonly control: ControlBus,
    private readonly log: Logger,
  ) {}

  /**
   * `steerWhen`: a Redis key whose presence (an open clarify question in the session) makes this message a steer
   * whatever `mode` says; checked atomically with the append.
   */
  async submit(sessionKey: string, payload: TurnPayload, configured: BusyInputMode, steerWhen?: string): Promise<SubmitResult> {
    const id = jobIdFor(payload.platform, payload.messageId);
    const capFor = (m: BusyInputMode): number => (m === 'interrupt' ? MAX_MAILBOX_INTERRUPT : MAX_PENDING + 1);
    const res = await this.mailbox.enqueue(
      id,
      sessionKey,
      payload,
      capFor(configured),
      steerWhen ? { marker: steerWhen, maxLength: capFor('steer') } : undefined,
    );
    if (res.status !== 'queued') {
      // A redelivery of a message whose earlier append was not confirmed by the replicas: it counts once they have it.
      if (res.unconfirmed) throw res.unconfirmed;
      this.log.debug({ jobId: id, sessionKey, status: res.status }, 'message not enqueued');
      return res;
    }
    const mode: BusyInputMode = res.steer ? 'steer' : configured;
    await this.addJob(sessionKey, id, res.seq);
    // The entry has its job; the platform is told "received" only once a replica holds the entry too, so the
    // hand-over is refused now and retried (the retry finds it a duplicate and waits for the replicas again).
    if (res.unconfirmed) {
      res.unconfirmed.appended = true;
      throw res.unconfirmed;
    }

    if (!res.busy || res.position <= 1) return res;
    const running = await this.mailbox.head(sessionKey);
    // Another part of the message the session is gathering (an album's picture, a split text's next part:
    // queue/parts.ts): part of that turn, not a new message.
    if (payload.partOf !== undefined && isPartOf(running?.entry, payload)) return res;
    switch (mode) {
      case 'interrupt': {
        // In a shared session (a thread) one person must not cancel the answer another is waiting for:
        // only the author of the running turn interrupts it; anyone else's message waits its turn.
        // A scheduled task's run is not interrupted: the message waits behind it, and the user is told so.
        if (running?.entry.payload.scheduled) return { ...res, acknowledge: await this.mailbox.mayAcknowledge(sessionKey, QUEUED_ACK_WINDOW_S) };
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

  /**
   * A scheduled task's due run (features/schedules/runner.ts): into the chat session's mailbox behind whatever waits there,
   * never capped (a due task is not dropped because the user queued a lot) and never interrupting or steering a
   * running turn (the worker treats its entry as a turn of its own). Its entry id names the run, so handling the
   * same run twice queues one turn.
   */
  async submitScheduled(sessionKey: string, payload: TurnPayload): Promise<EnqueueResult> {
    const id = jobIdFor(payload.platform, payload.messageId);
    const res = await this.mailbox.enqueue(id, sessionKey, payload, 0);
    if (res.status === 'queued') await this.addJob(sessionKey, id, res.seq);
    if (res.unconfirmed) throw res.unconfirmed;
    return res;
  }

  /** A job that fails (Redis blinked during ack, say) must run again, or its mailbox entry could be stranded. */
  private async addJob(sessionKey: string, entryId: string, seq: number): Promise<void> {
    await this.queue.add(
      'turn',
      { sessionKey, entryId, seq },
      { jobId: entryJobId(entryId, seq), attempts: JOB_ATTEMPTS, backoff: JOB_BACKOFF, ...JOB_RETENTION },
    );
  }
}
