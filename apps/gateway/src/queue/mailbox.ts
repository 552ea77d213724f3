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
  /** Set on a scheduled task's turn (schedules/runner.ts); `userId` is then the task's owner. */
  scheduled?: ScheduledRun;
  /** The agent profile that answers (profiles/table.ts); absent: the default profile. */
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
export interface ScheduledRun {
  /** The task's id (schedules table). */
  id: string;
  /** `own`: the turn runs in a session of the task's own; `origin`: in the chat's session. */
  session: 'own' | 'origin';
  /** When the run was due (ms). */
  runAt: number;
}

export type EnqueueResult =
  | { status: 'queued'; seq: number; position: number; busy: boolean }
  | { status: 'duplicate' }
  | { status: 'full'; pending: number };

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
export const SEEN_AFTER_DONE_S = 3600;
/** How long it is recognised while pending (a session can be busy for a while). */
const SEEN_WHILE_PENDING_S = 24 * 3600;
/**
 * A session's seq and fence counters expire after this long unused, so keys of long-gone conversations do not
 * pile up. Far longer than any lock or interrupt marker (1 day), so a counter never restarts under one; the fence
 * is time-based besides (see NEXT_FENCE), so even a restarted one only grows.
 */
const COUNTER_TTL_S = 30 * 24 * 3600;

const ENQUEUE = `
-- KEYS: seen, mbox, lock, seq   ARGV: entry-json-template, seen-ttl, max-len
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) == false then return {-1, 0, 0} end
local len = redis.call('LLEN', KEYS[2])
local max = tonumber(ARGV[3])
if max > 0 and len >= max then
  redis.call('DEL', KEYS[1])
  return {-2, len, 0}
end
local seq = redis.call('INCR', KEYS[4])
redis.call('EXPIRE', KEYS[4], ${COUNTER_TTL_S})
local entry = string.gsub(ARGV[1], '"seq":0', '"seq":' .. seq, 1)
redis.call('RPUSH', KEYS[2], entry)
return {seq, len + 1, redis.call('EXISTS', KEYS[3]), entry}
`;

// The next fencing token of a session: the server clock in µs, or one more than the last token if that is larger.
const NEXT_FENCE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local fence = math.max(now, last + 1)
redis.call('SET', KEYS[2], string.format('%.0f', fence), 'EX', ${COUNTER_TTL_S})
`;

const ACQUIRE = `
-- KEYS: lock, fence   ARGV: worker-id, ttl-ms
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('PTTL', KEYS[1])} end
${NEXT_FENCE}
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. string.format('%.0f', fence), 'PX', ARGV[2])
return {1, string.format('%.0f', fence)}
`;

const FENCE = `
-- KEYS: (unused), fence
${NEXT_FENCE}
return string.format('%.0f', fence)
`;

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

// Finishes a turn in one round trip, for the lock holder only: removes the head entry (and entries the turn
// absorbed by steering or merging), shortens the redelivery memory of those messages to SEEN_AFTER_DONE_S, and
// releases the lock when nothing is left — atomically with seeing the mailbox empty, as RELEASE_IF_EMPTY does.
const ACK = `
-- KEYS: lock, mbox, seen keys of the finished messages...   ARGV: token, seen-ttl, head-entry, absorbed entries...
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LINDEX', KEYS[2], 0) == ARGV[3] then redis.call('LPOP', KEYS[2]) end
for i = 4, #ARGV do redis.call('LREM', KEYS[2], 1, ARGV[i]) end
for i = 3, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
local left = redis.call('LLEN', KEYS[2])
if left == 0 then redis.call('DEL', KEYS[1]) end
return left
`;

// Whether the session's mailbox still holds the entry with this id and arrival number. An entry's JSON starts
// with its id, session key and seq in that order (see enqueue), so the prefix names it exactly.
const HOLDS = `
-- KEYS: mbox   ARGV: entry-prefix
local items = redis.call('LRANGE', KEYS[1], 0, -1)
for i = 1, #items do
  if string.sub(items[i], 1, #ARGV[1]) == ARGV[1] then return 1 end
end
return 0
`;

const RELEASE_IF_EMPTY = `
-- KEYS: lock, mbox   ARGV: token
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

// 1: still the holder and not interrupted by a later message (the reply is not stale); 0: interrupted or stopped
// (the reply is stale for good); -1: not interrupted, but the lock is no longer ours (another worker runs it).
const CAN_DELIVER = `
-- KEYS: lock, intr, replying   ARGV: token, seq, head seq of the turn now sending its reply ('' when not)
local intr = tonumber(redis.call('GET', KEYS[2]) or '0')
if intr > tonumber(ARGV[2]) then return 0 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3], 'EX', 600) end
return 1
`;

// A "queued" acknowledgement is due unless the running turn (the head entry) is already sending its reply: a
// message arriving then is answered next, at once, so "I will answer after the current task" would only confuse.
// At most one per window per session. (The marker names the head by its seq, so one left behind by a crash
// never silences the acknowledgement of a later turn.)
const MAY_ACKNOWLEDGE = `
-- KEYS: ack, replying, mbox   ARGV: window seconds
local marker = redis.call('GET', KEYS[2])
if marker then
  local head = redis.call('LINDEX', KEYS[3], 0)
  if head then
    local ok, entry = pcall(cjson.decode, head)
    if ok and type(entry) == 'table' and tostring(entry.seq) == marker then return 0 end
  end
end
if redis.call('SET', KEYS[1], '1', 'EX', ARGV[1], 'NX') then return 1 end
return 0
`;

/** Whether a turn may send: `stale` replies are never wanted again; after `lock_lost` another worker answers. */
export type DeliveryCheck = 'ok' | 'stale' | 'lock_lost';

const MARK_INTERRUPT = `
-- KEYS: intr   ARGV: seq
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1], 'EX', 86400) end
return 1
`;

// /stop: drop pending entries, break the lock whoever holds it (even a hung worker), mark everything so far stale.
// Scheduled tasks' runs that wait (not the one running) are kept: the user stopped their own work, not a reminder.
// (The marker cannot come from user text: inside the JSON of a text every quote is escaped.)
const STOP = `
-- KEYS: lock, mbox, fence, intr, seq
local held = redis.call('EXISTS', KEYS[1])
local items = redis.call('LRANGE', KEYS[2], held, -1)
local kept = {}
for i = 1, #items do
  if string.find(items[i], '"scheduled":{"id":', 1, true) then table.insert(kept, items[i]) end
end
local pending = redis.call('LLEN', KEYS[2]) - #kept
redis.call('DEL', KEYS[1], KEYS[2])
if #kept > 0 then redis.call('RPUSH', KEYS[2], unpack(kept)) end
local fence = redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], ${COUNTER_TTL_S})

local seq = redis.call('GET', KEYS[5]) or '0'
redis.call('SET', KEYS[4], tostring(tonumber(seq) + 1), 'EX', 86400)
return {held, pending, string.format('%.0f', fence)}
`;

type Script = (...args: (string | number)[]) => Promise<unknown>;

export class Mailbox {
  private readonly scripts: Record<string, Script> = {};

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly lockTtlMs: number,
  ) {
    const defs = { ENQUEUE: [4, ENQUEUE], ACQUIRE: [2, ACQUIRE], FENCE: [2, FENCE], RENEW: [1, RENEW], ACK: [null, ACK], HOLDS: [1, HOLDS], RELEASE_IF_EMPTY: [2, RELEASE_IF_EMPTY], RELEASE: [1, RELEASE], CAN_DELIVER: [3, CAN_DELIVER], MAY_ACKNOWLEDGE: [3, MAY_ACKNOWLEDGE], MARK_INTERRUPT: [1, MARK_INTERRUPT], STOP: [5, STOP] } as const;
    for (const [name, [numberOfKeys, lua]] of Object.entries(defs)) {
      const cmd = `herald${name}`;
      // defineCommand caches the script's SHA and falls back to EVAL on NOSCRIPT (e.g. after a Redis restart).
      // null: the key count varies per call and is passed as the first argument.
      redis.defineCommand(cmd, numberOfKeys === null ? { lua } : { numberOfKeys, lua });
      this.scripts[name] = (redis as unknown as Record<string, Script>)[cmd].bind(redis);
    }
  }

  key(kind: 'mbox' | 'lock' | 'fence' | 'seq' | 'intr' | 'seen' | 'ack' | 'withdrawn' | 'replying', id: string): string {
    return `${this.prefix}:${kind}:${id}`;
  }

  /**
   * Appends a message to its session's mailbox unless this platform message was seen already.
   * `maxLength` caps the mailbox (running entry included); 0 = no cap.
   */
  async enqueue(id: string, sessionKey: string, payload: TurnPayload, maxLength = 0): Promise<EnqueueResult & { entry?: string }> {
    // Key order matters: ENQUEUE fills in "seq" and holds() names an entry by the JSON up to it.
    const template: MailboxEntry = { id, sessionKey, seq: 0, enqueuedAt: Date.now(), payload };
    const json = JSON.stringify(template);
    const res = (await this.scripts.ENQUEUE(
      this.key('seen', id),
      this.key('mbox', sessionKey),
      this.key('lock', sessionKey),
      this.key('seq', sessionKey),
      json,
      SEEN_WHILE_PENDING_S,
      maxLength,
    )) as [number, number, number, string?];
    if (res[0] === -1) return { status: 'duplicate' };
    if (res[0] === -2) return { status: 'full', pending: res[1] };
    return { status: 'queued', seq: res[0], position: res[1], busy: res[2] === 1, entry: res[3] };
  }

  async acquire(sessionKey: string, workerId: string): Promise<Lock | { heldForMs: number }> {
    const [ok, n] = (await this.scripts.ACQUIRE(this.key('lock', sessionKey), this.key('fence', sessionKey), workerId, this.lockTtlMs)) as [number, number | string];
    return ok === 1 ? { token: `${workerId}:${n}`, fence: Number(n) } : { heldForMs: Math.max(Number(n), 0) };
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
    const prefix = JSON.stringify({ id: entryId, sessionKey, seq }).slice(0, -1) + ',';
    return (await this.scripts.HOLDS(this.key('mbox', sessionKey), prefix)) === 1;
  }

  /**
   * Finishes the head (and absorbed entries): -1 the lock is no longer ours; 0 the mailbox is empty and the lock
   * released; otherwise the number of entries still waiting (the lock is kept).
   */
  async ack(sessionKey: string, token: string, headRaw: string, absorbed: string[] = []): Promise<number> {
    const seenKeys = [headRaw, ...absorbed].map((raw) => this.key('seen', (JSON.parse(raw) as MailboxEntry).id));
    const keys = [this.key('lock', sessionKey), this.key('mbox', sessionKey), ...seenKeys];
    return (await this.scripts.ACK(keys.length, ...keys, token, SEEN_AFTER_DONE_S, headRaw, ...absorbed)) as number;
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

  /** /stop: returns whether a turn held the session and how many entries were dropped. */
  /**
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

  async isBusy(sessionKey: string): Promise<boolean> {
    return (await this.redis.exists(this.key('lock', sessionKey))) === 1;
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
