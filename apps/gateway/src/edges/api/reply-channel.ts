/**
 * The return path of the OpenAI-compatible API: a turn runs on whichever worker took its session, maybe in another
 * process or on another machine, and its answer has to reach the HTTP request waiting in an ingress process.
 *
 * Each request has a Redis stream, `<prefix>:api:out:<requestId>`. The worker appends the turn's events to it
 * (text deltas, tool progress, the reply, the end of the turn) and publishes the request id on one channel,
 * `<prefix>:api:replies`, as a wake-up call. The ingress holding the request reads the stream from where it left off.
 * The stream is the record, the channel only says "look now": a wake-up lost while the ingress' subscriber
 * reconnects costs nothing, because every waiting request reads again on reconnect and on a slow poll. A worker
 * that dies mid-turn leaves what it wrote; the worker that runs the turn again appends after it.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../support/logger.js';

/** What a turn tells the request waiting for it. Plain JSON: it travels through Redis. */
export type ReplyEvent =
  /** A run of the turn began (again, after a worker died): text shown for an earlier run is void. */
  | { t: 'start' }
  | { t: 'delta'; text: string }
  /** The agent called a tool; the next text belongs to a new model response. */
  | { t: 'tool'; phase: 'start' | 'end'; id: string; name: string; ok?: boolean }
  /** The model call is being retried or replaced: the text of the current response so far is void. */
  | { t: 'retry' }
  /** The agent loop finished: tokens used, the model that answered, the provider error kind that ended it. */
  | { t: 'result'; usage: { input: number; output: number; cacheRead: number; cacheWrite: number }; model: string; error: string | null }
  /** A message for the client: `final` is the turn's reply; otherwise a notice (a failure, a compression). */
  | { t: 'message'; text: string; final: boolean }
  /** The turn's entry left the session's mailbox: nothing more comes for this request. */
  | { t: 'end' };

/** How long an unread stream is kept (a request whose client went away, or that ended before its turn did). */
const REPLY_STREAM_TTL_MS = 10 * 60_000;
/** A waiting request reads its stream at least this often, whatever the wake-up calls did. */
const REPLY_POLL_MS = 5_000;
/** Entries read per round trip. */
const READ_BATCH = 500;

export function replyStreamKey(prefix: string, requestId: string): string {
  return `${prefix}:api:out:${requestId}`;
}

function replyChannel(prefix: string): string {
  return `${prefix}:api:replies`;
}

/**
 * The worker side: appends events in order, per request. Events pushed while an append is on its way are sent
 * together with the next one (a fast model's deltas cost one round trip per batch, not per delta).
 */
export class ReplyPublisher {
  private readonly outlets = new Map<string, Outlet>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Queues the event; resolves once it is in Redis (rejects if the append carrying it failed). */
  publish(requestId: string, event: ReplyEvent): Promise<void> {
    let outlet = this.outlets.get(requestId);
    if (!outlet) {
      outlet = { queue: [], chain: Promise.resolve() };
      this.outlets.set(requestId, outlet);
    }
    const o = outlet;
    const done = new Promise<void>((resolve, reject) => o.queue.push({ event, resolve, reject }));
    // One append at a time per request, in order; each takes everything queued when it starts.
    o.chain = o.chain.then(() => this.flush(requestId, o));
    return done;
  }

  private async flush(requestId: string, outlet: Outlet): Promise<void> {
    const items = outlet.queue.splice(0);
    if (items.length === 0) return;
    const key = replyStreamKey(this.prefix, requestId);
    try {
      const multi = this.redis.multi();
      for (const { event } of items) multi.xadd(key, '*', 'e', JSON.stringify(event));
      multi.pexpire(key, REPLY_STREAM_TTL_MS);
      multi.publish(replyChannel(this.prefix), requestId);
      const results = await multi.exec();
      if (!results) throw new Error('the reply stream append was discarded');
      for (const [err] of results) if (err) throw err;
      for (const item of items) item.resolve();
    } catch (err) {
      for (const item of items) item.reject(err);
    } finally {
      if (outlet.queue.length === 0 && this.outlets.get(requestId) === outlet) this.outlets.delete(requestId);
    }
  }
}

interface Outlet {
  queue: Array<{ event: ReplyEvent; resolve: () => void; reject: (err: unknown) => void }>;
  chain: Promise<void>;
}

interface Waiter {
  lastId: string;
  onEvents: (events: ReplyEvent[]) => void;
  reading: Promise<void> | null;
  again: boolean;
}

/**
 * The ingress side: one subscriber connection per process, whatever the number of waiting requests; each
 * request reads its own stream (plain XRANGE on the shared connection, never a blocking read).
 */
export class ReplyListener {
  private readonly waiters = new Map<string, Waiter>();
  private poll: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    private readonly log: Logger,
    private readonly pollMs = REPLY_POLL_MS,
  ) {}

  async start(): Promise<void> {
    const channel = replyChannel(this.prefix);
    this.subscriber.on('message', (ch: string, requestId: string) => {
      if (ch === channel) this.read(requestId);
    });
    // Wake-ups published while the subscriber was away are lost: read everything again once it is back.
    this.subscriber.on('ready', () => this.readAll());
    await this.subscriber.subscribe(channel);
    this.poll = setInterval(() => this.readAll(), this.pollMs);
    this.poll.unref();
  }

  /** Starts delivering the request's events, in order, from the beginning of its stream. */
  watch(requestId: string, onEvents: (events: ReplyEvent[]) => void): void {
    this.waiters.set(requestId, { lastId: '-', onEvents, reading: null, again: false });
    this.read(requestId);
  }

  /** Stops delivering and drops the stream (whatever comes later expires with its TTL). */
  async unwatch(requestId: string): Promise<void> {
    this.waiters.delete(requestId);
    await this.redis.del(replyStreamKey(this.prefix, requestId)).catch(() => undefined);
  }

  get watching(): number {
    return this.waiters.size;
  }

  async close(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    this.waiters.clear();
    await this.subscriber.unsubscribe(replyChannel(this.prefix)).catch(() => undefined);
  }

  private readAll(): void {
    for (const id of this.waiters.keys()) this.read(id);
  }

  /** One read at a time per request; a wake-up during a read makes it read once more afterwards. */
  private read(requestId: string): void {
    const w = this.waiters.get(requestId);
    if (!w) return;
    if (w.reading) {
      w.again = true;
      return;
    }
    w.reading = this.drain(requestId, w)
      .catch((err: unknown) => this.log.warn({ err, requestId }, 'reading an API reply stream failed; retrying on the next poll'))
      .finally(() => {
        w.reading = null;
        if (w.again && this.waiters.get(requestId) === w) {
          w.again = false;
          this.read(requestId);
        }
      });
  }

  private async drain(requestId: string, w: Waiter): Promise<void> {
    const key = replyStreamKey(this.prefix, requestId);
    for (;;) {
      const start = w.lastId === '-' ? '-' : `(${w.lastId}`;
      const entries = await this.redis.xrange(key, start, '+', 'COUNT', READ_BATCH);
      if (entries.length === 0 || this.waiters.get(requestId) !== w) return;
      w.lastId = entries[entries.length - 1][0];
      const events: ReplyEvent[] = [];
      for (const [, fields] of entries) {
        const json = fields[1];
        try {
          events.push(JSON.parse(json) as ReplyEvent);
        } catch {
          this.log.warn({ requestId }, 'unreadable API reply event skipped');
        }
      }
      w.onEvents(events);
      if (entries.length < READ_BATCH) return;
    }
  }
}
