/**
 * One turn at a time per session, across any number of workers — without BullMQ Pro groups.
 *
 * Every session key has, in Redis:
 *   mbox:<key>   a LIST of pending entries, in arrival order (the mailbox). An entry stays at the head while its
 *                turn runs and is removed only when the turn is finished, so a crash never loses it.
 *   lock:<key>   the session lock: `<worker>:<fence>`, with a TTL the holder keeps renewing.
 *   fence:<key>  the last fencing token; every acquisition (and every /stop) takes a larger one, so a holder that
 *                was paused or cut off and lost its lock can never renew, ack or deliver again — its token no longer
 *                matches, here or in the store's outbox, which refuses writes and sends under an older token.
 *                Tokens are Redis server time in µs (or one more than the last, if larger): they keep growing even
 *                after the key expired or Redis lost its data, so the store never sees a token go backwards.
 *   seq:<key>    a counter giving each entry its arrival number.
 *   intr:<key>   the highest entry seq that asked to interrupt; a running turn with a lower seq is stale.
 *
 * Ingress pushes an entry (atomically with the redelivery check) and adds one BullMQ job per message. A worker
 * taking any job of the session tries the lock: if it wins, it drains the mailbox head-first, one turn at a time,
 * and releases the lock only atomically with seeing the mailbox empty — so a message pushed before the release is
 * drained by the holder, and one pushed after it finds the lock free and is taken by its own job. A job that finds
 * the lock held and its entry still pending is delayed until the lock would expire: if the holder is alive it
 * drains the entry first (and the delayed job then finds nothing to do); if the holder died, the lock expires and
 * the delayed job (or the dead holder's own job, recovered by BullMQ's stalled-job check) takes over.
 * Unrelated sessions never share a lock, so one slow LLM call holds up nobody else.
 */
import type { Redis } from 'ioredis';
import type { Attachment, MessagePart } from '@herald/adapters';
import {
  ACK,
  ACQUIRE,
  CAN_DELIVER,
  ENQUEUE,
  FENCE,
  HOLDS,
  MARK_INTERRUPT,
  MAY_ACKNOWLEDGE,
  RELEASE,
  RELEASE_IF_EMPTY,
  RENEW,
  STOP,
  TAKE,
} from './mailbox-scripts.js';
import type { ReplicaWait, ReplicationPendingError } from './replica-wait.js';

export interface MailboxEntry {
  /** BullMQ job id, also the turn id of the outbox. */
  id: string;
  sessionKey: string;
  seq: number;
  enqueuedAt: number;
  /** The normalised inbound message (plain JSON) plus what the router added. */
  payload: TurnPayload;
}

export interface TurnPayload {
  text: string;
  platform: string;
  conversationId: string;
  chatType: string;
  chatId: string;
  userId: string;
  userName?: string;
  /** The platform's id of the user's message; absent for a scheduled task's turn (there is nothing to reply to). */
  platformMessageId?: string;
  threadId?: string;
  messageId: string;
  quoted?: { platformMessageId: string; text: string; fromBot: boolean };
  attachments?: Attachment[];
  /** A part of one message (InboundMessage.partOf: an album, a split text): the worker answers all its parts as one turn (queue/parts.ts). */
  partOf?: MessagePart;
  /**
   * Set by /retry: `text` is a stored user message whose files were already read into it (transcripts, document
   * text, image notes); only its images are fetched again, to be shown once more.
   */
  mediaInText?: boolean;
  /**
   * The sender may take the message back (an HTTP API client that went away): before its turn runs, the worker
   * looks for a withdrawal (Mailbox.withdraw), and a withdrawal while it runs aborts it like /stop.
   */
  withdrawable?: boolean;
  /** Set on a scheduled task's turn (features/schedules/runner.ts); `userId` is then the task's owner. */
  scheduled?: ScheduledRun;
  /** The agent profile that answers (features/profiles/table.ts); absent: the default profile. */
  profile?: string;
  /** The bot account that received the message and sends the reply; absent: the platform's default one. */
  account?: string;
  /** Discord guild / Slack team, for routing. */
  spaceId?: string;
}

/**
 * A due run of a scheduled task. Its entry waits in the chat's mailbox like a message, but is always a turn of its
 * own: never merged with the user's messages, never interrupted or steered by them, and kept by /stop.
 */
interface ScheduledRun {
  /** The task's id (schedules table). */
  id: string;
  /** `own`: the turn runs in a session of the task's own; `origin`: in the chat's session. */
  session: 'own' | 'origin';
  /** When the run was due (ms). */
  runAt: number;
}

export type EnqueueResult = { status: 'queued'; seq: number; position: number; busy: boolean } | { status: 'duplicate' } | { status: 'full'; pending: number };

export interface Lock {
  token: string;
  fence: number;
}

/**
 * How long a redelivered platform message is still recognised after its turn finished. This key is the one
 * redelivery authority (BullMQ job ids follow it: see entryJobId in producer.ts). An hour covers every platform's
 * own redelivery (Slack retries for about 5 minutes after the first attempt, Discord replays on RESUME within
 * minutes, Telegram re-serves unconfirmed updates to a restarted poller) with room for a slow turn in between;
 * it is the window completed jobs used to give, so nothing recognised before is missed now.
 */
const SEEN_AFTER_DONE_S = 3600;
/** How long it is recognised while pending (a session can be busy for a while). */
const SEEN_WHILE_PENDING_S = 24 * 3600;
/** Whether a turn may send: `stale` replies are never wanted again; after `lock_lost` another worker answers. */
export type DeliveryCheck = 'ok' | 'stale' | 'lock_lost';

type Script = (...args: (string | number)[]) => Promise<unknown>;

export class Mailbox {
  private readonly scripts: Record<string, Script> = {};
  /** ENQUEUE on the appends' own connection, when appends wait for replicas. */
  private readonly durableEnqueue: Script | null = null;

  /** `replicaWait`: appends wait for replicas before the message counts as received (HERALD_REDIS_WAIT_REPLICAS). */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly lockTtlMs: number,
    private readonly replicaWait: ReplicaWait | null = null,
  ) {
    const defs = {
      ENQUEUE: [null, ENQUEUE],
      ACQUIRE: [2, ACQUIRE],
      TAKE: [3, TAKE],
      FENCE: [2, FENCE],
      RENEW: [1, RENEW],
      ACK: [null, ACK],
      HOLDS: [1, HOLDS],
      RELEASE_IF_EMPTY: [2, RELEASE_IF_EMPTY],
      RELEASE: [1, RELEASE],
      CAN_DELIVER: [3, CAN_DELIVER],
      MAY_ACKNOWLEDGE: [3, MAY_ACKNOWLEDGE],
      MARK_INTERRUPT: [1, MARK_INTERRUPT],
      STOP: [5, STOP],
    } as const;
    for (const [name, [numberOfKeys, lua]] of Object.entries(defs)) {
      const cmd = `herald${name}`;
      // defineCommand caches the script's SHA and falls back to EVAL on NOSCRIPT (e.g. after a Redis restart).
      // null: the key count varies per call and is passed as the first argument.
      redis.defineCommand(cmd, numberOfKeys === null ? { lua } : { numberOfKeys, lua });
      this.scripts[name] = (redis as unknown as Record<string, Script>)[cmd].bind(redis);
    }
    const appends = replicaWait?.redis;
    if (appends) {
      appends.defineCommand('heraldENQUEUE', { lua: ENQUEUE });
      this.durableEnqueue = (appends as unknown as Record<string, Script>).heraldENQUEUE.bind(appends);
    }
  }

  key(kind: 'mbox' | 'lock' | 'fence' | 'seq' | 'intr' | 'seen' | 'ack' | 'withdrawn' | 'replying', id: string): string {
    return `${this.prefix}:${kind}:${id}`;
  }

  /**
   * Appends a message to its session's mailbox unless this platform message was seen already.
   * `maxLength` caps the mailbox (running entry included); 0 = no cap. `steerWhen`: a Redis key (an open clarify
   * question's marker) that, while it exists, makes the message a steer capped by `steerWhen.maxLength`; looked at
   * in the same round trip, and reported as `steer`.
   */
  async enqueue(
    id: string,
    sessionKey: string,
    payload: TurnPayload,
    maxLength = 0,
    steerWhen?: { marker: string; maxLength: number },
  ): Promise<EnqueueResult & { entry?: string; steer?: boolean; unconfirmed?: ReplicationPendingError }> {
    // Key order matters: ENQUEUE fills in "seq" and holds() names an entry by the JSON up to it.
    const template: MailboxEntry = { id, sessionKey, seq: 0, enqueuedAt: Date.now(), payload };
    const json = JSON.stringify(template);
    const keys = [
      this.key('seen', id),
      this.key('mbox', sessionKey),
      this.key('lock', sessionKey),
      this.key('seq', sessionKey),
      ...(steerWhen ? [steerWhen.marker] : []),
    ];
    const args = [json, SEEN_WHILE_PENDING_S, maxLength, ...(steerWhen ? [steerWhen.maxLength] : [])];
    type Reply = [number, number, number, string?, number?];
    let res: Reply;
    let unconfirmed: ReplicationPendingError | undefined;
    if (this.replicaWait && this.durableEnqueue) {
      const append = this.durableEnqueue;
      const waited = await this.replicaWait.after(
        async () => (await append(keys.length, ...keys, ...args)) as Reply,
        (r) => r[0] >= 0,
      );
      res = waited.result;
      if (waited.outcome !== 'confirmed') unconfirmed = this.replicaWait.refusal(waited.outcome);
    } else {
      res = (await this.scripts.ENQUEUE(keys.length, ...keys, ...args)) as Reply;
    }
    if (res[0] === -1) return { status: 'duplicate', unconfirmed };
    if (res[0] === -2) return { status: 'full', pending: res[1], unconfirmed };
    return { status: 'queued', seq: res[0], position: res[1], busy: res[2] === 1, entry: res[3], steer: res[4] === 1, unconfirmed };
  }

  async acquire(sessionKey: string, workerId: string): Promise<Lock | { heldForMs: number }> {
    const [ok, n] = (await this.scripts.ACQUIRE(this.key('lock', sessionKey), this.key('fence', sessionKey), workerId, this.lockTtlMs)) as [
      number,
      number | string,
    ];
    return ok === 1 ? { token: `${workerId}:${n}`, fence: Number(n) } : { heldForMs: Math.max(Number(n), 0) };
  }

  /**
   * A job's first step (see TAKE): `empty` — the mailbox holds nothing (the lock was not taken); `held` — another
   * worker holds the lock, and whether the job's entry (id + arrival number) still waits; `acquired` — the lock, its
   * fence and the head entry to run.
   */
  async take(
    sessionKey: string,
    workerId: string,
    entry: { entryId: string; seq: number },
  ): Promise<
    { status: 'empty' } | { status: 'held'; heldForMs: number; holds: boolean } | ({ status: 'acquired'; head: { raw: string; entry: MailboxEntry } } & Lock)
  > {
    const res = (await this.scripts.TAKE(
      this.key('lock', sessionKey),
      this.key('fence', sessionKey),
      this.key('mbox', sessionKey),
      workerId,
      this.lockTtlMs,
      this.entryPrefix(sessionKey, entry.entryId, entry.seq),
    )) as [-1] | [0, number, number] | [1, string, string];
    if (res[0] === -1) return { status: 'empty' };
    if (res[0] === 0) return { status: 'held', heldForMs: Math.max(Number(res[1]), 0), holds: res[2] === 1 };
    return { status: 'acquired', token: `${workerId}:${res[1]}`, fence: Number(res[1]), head: { raw: res[2], entry: JSON.parse(res[2]) as MailboxEntry } };
  }

  /** A fencing token larger than any the session has seen: to take a turn away from a worker (watchdog). */
  async nextFence(sessionKey: string): Promise<number> {
    return Number(await this.scripts.FENCE(this.key('lock', sessionKey), this.key('fence', sessionKey)));
  }

  async renew(sessionKey: string, token: string): Promise<boolean> {
    return (await this.scripts.RENEW(this.key('lock', sessionKey), token, this.lockTtlMs)) === 1;
  }

  async head(sessionKey: string): Promise<{ raw: string; entry: MailboxEntry } | null> {
    const raw = await this.redis.lindex(this.key('mbox', sessionKey), 0);
    return raw ? { raw, entry: JSON.parse(raw) as MailboxEntry } : null;
  }

  /** Entries after the head (pending while a turn runs). */
  async pending(sessionKey: string): Promise<Array<{ raw: string; entry: MailboxEntry }>> {
    const raws = await this.redis.lrange(this.key('mbox', sessionKey), 1, -1);
    return raws.map((raw) => ({ raw, entry: JSON.parse(raw) as MailboxEntry }));
  }

  /** True while the entry (by id and arrival number) is still in the session's mailbox, at the head or pending. */
  async holds(sessionKey: string, entryId: string, seq: number): Promise<boolean> {
    return (await this.scripts.HOLDS(this.key('mbox', sessionKey), this.entryPrefix(sessionKey, entryId, seq))) === 1;
  }

  /** The start of an entry's JSON up to its seq: names the entry exactly (see enqueue for the key order). */
  private entryPrefix(sessionKey: string, entryId: string, seq: number): string {
    return `${JSON.stringify({ id: entryId, sessionKey, seq }).slice(0, -1)},`;
  }

  /**
   * Finishes the head (and absorbed entries): -1 the lock is no longer ours; 0 the mailbox is empty and the lock
   * released; otherwise the number of entries still waiting (the lock is kept).
   */
  async ack(sessionKey: string, token: string, headRaw: string, absorbed: string[] = []): Promise<number> {
    return (await this.ackAndNext(sessionKey, token, headRaw, absorbed)).left;
  }

  /** `ack`, and the entry now at the head when some are left (the holder's next turn). */
  async ackAndNext(
    sessionKey: string,
    token: string,
    headRaw: string,
    absorbed: string[] = [],
  ): Promise<{ left: number; next: { raw: string; entry: MailboxEntry } | null }> {
    const seenKeys = [headRaw, ...absorbed].map((raw) => this.key('seen', (JSON.parse(raw) as MailboxEntry).id));
    const keys = [this.key('lock', sessionKey), this.key('mbox', sessionKey), ...seenKeys];
    const res = (await this.scripts.ACK(keys.length, ...keys, token, SEEN_AFTER_DONE_S, headRaw, ...absorbed)) as number | [number, string?];
    if (typeof res === 'number') return { left: res, next: null };
    const [left, raw] = res;
    return { left, next: raw ? { raw, entry: JSON.parse(raw) as MailboxEntry } : null };
  }

  /** 1: released; 0: entries are waiting, keep going; -1: the lock is no longer ours. */
  async releaseIfEmpty(sessionKey: string, token: string): Promise<-1 | 0 | 1> {
    return (await this.scripts.RELEASE_IF_EMPTY(this.key('lock', sessionKey), this.key('mbox', sessionKey), token)) as -1 | 0 | 1;
  }

  async release(sessionKey: string, token: string): Promise<void> {
    await this.scripts.RELEASE(this.key('lock', sessionKey), token);
  }

  /**
   * `replyingHead`: the head entry's seq when the check is for the turn's final reply; on 'ok' the session is then
   * marked as replying, so a message arriving before the entry is acknowledged gets no "queued" note.
   */
  async deliveryCheck(sessionKey: string, token: string, seq: number, replyingHead?: number): Promise<DeliveryCheck> {
    const keys = [this.key('lock', sessionKey), this.key('intr', sessionKey), this.key('replying', sessionKey)];
    const r = (await this.scripts.CAN_DELIVER(...keys, token, seq, replyingHead ?? '')) as number;
    return r === 1 ? 'ok' : r === 0 ? 'stale' : 'lock_lost';
  }

  async canDeliver(sessionKey: string, token: string, seq: number): Promise<boolean> {
    return (await this.deliveryCheck(sessionKey, token, seq)) === 'ok';
  }

  /** Marks every entry before `seq` as interrupted (their replies are stale). */
  async markInterrupt(sessionKey: string, seq: number): Promise<void> {
    await this.scripts.MARK_INTERRUPT(this.key('intr', sessionKey), seq);
  }

  async isInterrupted(sessionKey: string, seq: number): Promise<boolean> {
    const v = await this.redis.get(this.key('intr', sessionKey));
    return v !== null && Number(v) > seq;
  }

  /**
   * /stop: returns whether a turn held the session and how many entries were dropped.
   * `fence`: the session's fencing token after the stop. Turns that hold a lower one are the ones stopped; a turn
   * that took the session after the stop (a waiting scheduled run, say) holds a higher one and runs on.
   */
  async stop(sessionKey: string): Promise<{ wasBusy: boolean; dropped: number; fence: number }> {
    const [held, pending, fence] = (await this.scripts.STOP(
      this.key('lock', sessionKey),
      this.key('mbox', sessionKey),
      this.key('fence', sessionKey),
      this.key('intr', sessionKey),
      this.key('seq', sessionKey),
    )) as [number, number, string];
    return { wasBusy: held === 1, dropped: held === 1 ? Math.max(pending - 1, 0) : pending, fence: Number(fence) };
  }

  /** A turn holds the session; with `unlessKey`, only while that key (a clarify question's marker) does not exist. */
  async isBusy(sessionKey: string, unlessKey?: string): Promise<boolean> {
    if (unlessKey === undefined) return (await this.redis.exists(this.key('lock', sessionKey))) === 1;
    const [[, locked], [, marked]] = (await this.redis.multi().exists(this.key('lock', sessionKey)).exists(unlessKey).exec()) as [
      [null, number],
      [null, number],
    ];
    return locked === 1 && marked === 0;
  }

  async length(sessionKey: string): Promise<number> {
    return this.redis.llen(this.key('mbox', sessionKey));
  }

  /** Marks a withdrawable entry as taken back by its sender (kept as long as an entry is remembered while pending). */
  async withdraw(entryId: string): Promise<void> {
    await this.redis.set(this.key('withdrawn', entryId), '1', 'EX', SEEN_WHILE_PENDING_S);
  }

  /** True when any of these entries was withdrawn. */
  async anyWithdrawn(entryIds: string[]): Promise<boolean> {
    if (entryIds.length === 0) return false;
    return (await this.redis.exists(...entryIds.map((id) => this.key('withdrawn', id)))) > 0;
  }

  /** Once per window per session, and not while the running turn sends its reply (MAY_ACKNOWLEDGE). */
  async mayAcknowledge(sessionKey: string, windowS: number): Promise<boolean> {
    const keys = [this.key('ack', sessionKey), this.key('replying', sessionKey), this.key('mbox', sessionKey)];
    return (await this.scripts.MAY_ACKNOWLEDGE(...keys, windowS)) === 1;
  }
}
