/**
 * One Matrix account's ingress: its own `/sync` long-poll loop (through the SDK's HTTP API, see client.ts), with the
 * sync position (`next_batch`) saved only after every message of a batch was handed over, so a restart continues
 * where it left off: nothing replayed, nothing lost. The very first sync (no saved position) only takes the
 * position and the pending invites: history from before Herald joined is never answered.
 *
 * Per batch: invites (joined when the inviter is allowed, else declined and logged), then each joined room's
 * timeline in order. Rooms need a mention, one-to-one rooms and threads the bot takes part in do not. Encrypted
 * rooms are refused with a message. Event ids seen before are dropped here; the mailbox drops repeats across
 * processes.
 */
import type { Logger } from 'pino';
import { AuthError, NetworkError, PlatformError, RateLimitedError } from '../errors.js';
import { RecentIds } from '../shared/recent-ids.js';
import type { AdapterHealth, AdapterState, InboundHandler, InboundMessage, PlatformIngress } from '../types.js';
import { MatrixClient, Method, seg } from './client.js';
import { isRoomId, matrixCodec } from './codec.js';
import {
  MATRIX_DEDUPE_CAPACITY,
  MATRIX_SYNC_BACKOFF_MS,
  MATRIX_SYNC_GRACE_MS,
  MATRIX_SYNC_TIMEOUT_MS,
  type MatrixIngressOptions,
  type MatrixIngressMemory,
} from './config.js';
import { MatrixEgress } from './egress.js';
import { ProcessMatrixMemory } from './memory.js';
import { normalizeEvent, type Normalized, type RoomContext } from './normalize.js';
import { RoomBook } from './rooms.js';
import { isRecord, type Json } from '../shared/wire-values.js';

const entries = (v: unknown): [string, Json][] => (isRecord(v) ? Object.entries(v).filter((e): e is [string, Json] => isRecord(e[1])) : []);
const eventsOf = (v: unknown): unknown[] => (isRecord(v) && Array.isArray(v.events) ? v.events : []);

const FIRST_SYNC_FILTER = JSON.stringify({ room: { timeline: { limit: 1 } } });

/** The threads the bot takes part in (a reply there needs no mention); the gateway keeps them in its store. */
export interface ThreadMemory {
  has(conversationId: string): boolean | Promise<boolean>;
  add(conversationId: string): unknown;
}

export class MatrixIngress implements PlatformIngress {
  readonly platform = 'matrix' as const;
  private readonly client: MatrixClient;
  private readonly logger: Logger;
  private readonly memory: MatrixIngressMemory;
  private readonly seen: RecentIds;
  private readonly rooms: RoomBook;
  private readonly egress: MatrixEgress;
  private handler: InboundHandler | null = null;
  private stopping: AbortController | null = null;
  private loop: Promise<void> | null = null;
  private state: AdapterState = 'disconnected';
  private lastEventAt: number | null = null;
  private lastError: string | null = null;
  private botNames: string[];

  constructor(
    private readonly opts: MatrixIngressOptions & { threads: ThreadMemory },
    client?: MatrixClient,
  ) {
    this.client = client ?? new MatrixClient(opts);
    this.logger = opts.logger;
    this.memory = opts.memory ?? new ProcessMatrixMemory();
    this.seen = new RecentIds(opts.dedupeCapacity ?? MATRIX_DEDUPE_CAPACITY);
    this.rooms = new RoomBook(this.client, this.logger, this.memory);
    this.egress = new MatrixEgress(opts, this.client);
    const localpart = /^@([^:]+):/.exec(opts.userId)?.[1] ?? '';
    this.botNames = [opts.displayName, localpart].filter((n): n is string => !!n && n.length >= 2).map((n) => n.toLowerCase());
  }

  async start(handler: InboundHandler): Promise<void> {
    this.handler = handler;
    this.stopping = new AbortController();
    this.state = 'connecting';
    await this.learnDisplayName();
    this.loop = this.run(this.stopping.signal);
  }

  async stop(): Promise<void> {
    this.stopping?.abort();
    await this.loop?.catch(() => undefined);
    this.loop = null;
    this.handler = null;
    this.state = 'disconnected';
  }

  health(): AdapterHealth {
    return { state: this.state, lastEventAt: this.lastEventAt, error: this.lastError };
  }

  private async learnDisplayName(): Promise<void> {
    try {
      const res = await this.client.call<{ displayname?: unknown }>('profile', Method.Get, `/profile/${seg(this.opts.userId)}/displayname`);
      const name = typeof res.displayname === 'string' ? res.displayname.trim().toLowerCase() : '';
      if (name.length >= 2 && !this.botNames.includes(name)) this.botNames = [name, ...this.botNames];
    } catch (err) {
      this.logger.debug({ err: err instanceof Error ? err.message : String(err) }, 'matrix: display name unknown; mentions by user id and localpart only');
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    let since = await this.loadToken(signal);
    let backoff = 0;
    while (!signal.aborted) {
      try {
        const batch = await this.sync(since, signal);
        this.state = 'connected';
        this.lastError = null;
        this.lastEventAt = Date.now();
        await this.takeBatch(batch, since === null);
        const next = typeof batch.next_batch === 'string' && batch.next_batch !== '' ? batch.next_batch : since;
        // No position at all yet: asking again at once (a first sync does not wait) would spin; back off instead.
        if (next === null) throw new PlatformError('matrix sync: answer without next_batch', 'matrix');
        if (next !== since) await this.memory.saveSyncToken(next);
        since = next;
        backoff = 0;
      } catch (err) {
        if (signal.aborted) break;
        backoff = Math.min(backoff === 0 ? MATRIX_SYNC_BACKOFF_MS.first : backoff * 2, MATRIX_SYNC_BACKOFF_MS.max);
        this.lastError = err instanceof Error ? err.message : String(err);
        this.state = err instanceof AuthError ? 'fatal' : 'connecting';
        const level = err instanceof AuthError ? 'error' : 'warn';
        this.logger[level]({ err: this.lastError, retryInMs: backoff }, 'matrix: sync failed; trying again');
        await sleep(backoff, signal);
      }
    }
  }

  private async loadToken(signal: AbortSignal): Promise<string | null> {
    for (let wait: number = MATRIX_SYNC_BACKOFF_MS.first; !signal.aborted; wait = Math.min(wait * 2, MATRIX_SYNC_BACKOFF_MS.max)) {
      try {
        return await this.memory.loadSyncToken();
      } catch (err) {
        this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'matrix: sync position not readable yet; waiting');
        await sleep(wait, signal);
      }
    }
    return null;
  }

  private async sync(since: string | null, signal: AbortSignal): Promise<Json> {
    const timeout = since === null ? 0 : (this.opts.syncTimeoutMs ?? MATRIX_SYNC_TIMEOUT_MS);
    // The first sync only takes the position: one event per room is enough (its timelines are skipped).
    const query: Record<string, string> = { timeout: String(timeout), ...(since === null ? { filter: FIRST_SYNC_FILTER } : { since }) };
    const res = await this.client.call<unknown>('sync', Method.Get, '/sync', { query, signal, timeoutMs: timeout + MATRIX_SYNC_GRACE_MS });
    if (!isRecord(res)) throw new PlatformError('matrix sync: answer is not an object', 'matrix');
    return res;
  }

  /** `first`: the position-taking first sync; its timelines are history, not messages. */
  private async takeBatch(batch: Json, first: boolean): Promise<void> {
    const rooms = isRecord(batch.rooms) ? batch.rooms : {};
    for (const [roomId, room] of entries(rooms.invite)) await this.takeInvite(roomId, room);
    for (const [roomId, room] of entries(rooms.join)) {
      if (!isRoomId(roomId)) continue;
      const timeline = eventsOf(room.timeline);
      this.rooms.learn(roomId, [...eventsOf(room.state), ...timeline], room.summary);
      if (first) continue;
      try {
        await this.takeRoom(roomId, timeline);
      } catch (err) {
        // The homeserver refused something about this room for good (left it, no access): its events are
        // skipped, not retried forever in front of every other room's.
        if (!isPermanent(err)) throw err;
        this.logger.warn({ roomId, err: err.message }, 'matrix: room skipped in this sync');
      }
    }
  }

  private async takeInvite(roomId: string, room: Json): Promise<void> {
    // Not a room id a server makes: nothing to join or decline, and nothing to ask the server again.
    if (!isRoomId(roomId)) return void this.logger.warn({ roomId }, 'matrix: invite to a room id that is not one; ignored');
    const invite = eventsOf(room.invite_state).find(
      (e): e is Json =>
        isRecord(e) && e.type === 'm.room.member' && e.state_key === this.opts.userId && isRecord(e.content) && e.content.membership === 'invite',
    );
    const inviter = typeof invite?.sender === 'string' ? invite.sender : '';
    const allowed = this.opts.inviteFrom.includes('*') || this.opts.inviteFrom.includes(inviter);
    try {
      if (allowed) {
        await this.client.call('join', Method.Post, `/rooms/${seg(roomId)}/join`, { body: {} });
        this.logger.info({ roomId, inviter }, 'matrix: invite accepted');
      } else {
        await this.client.call('decline invite', Method.Post, `/rooms/${seg(roomId)}/leave`, { body: {} });
        this.logger.warn({ roomId, inviter }, 'matrix: invite from someone not on MATRIX_INVITE_FROM; declined');
      }
    } catch (err) {
      if (!(err instanceof PlatformError) || err instanceof AuthError) throw err;
      this.logger.warn({ roomId, err: err.message }, 'matrix: could not answer an invite');
    }
  }

  private async takeRoom(roomId: string, timeline: readonly unknown[]): Promise<void> {
    let ctx: RoomContext | null = null;
    for (const ev of timeline) {
      if (!isRecord(ev)) continue;
      if (ev.sender === this.opts.userId) {
        await this.noteOwn(roomId, ev);
        continue;
      }
      if (ev.type === 'm.room.encrypted') {
        await this.rooms.refuseEncrypted(roomId, (r, t) => this.egress.send(matrixCodec.encode({ roomId: r }), t, { plain: true }));
        continue;
      }
      if (ev.type !== 'm.room.message') continue;
      if (ctx === null) {
        ctx = await this.contextOf(roomId);
        if (ctx === null) return;
      }
      const n = normalizeEvent(ev, ctx);
      if (n === null) {
        this.logger.debug({ roomId }, 'matrix: event Herald does not answer; skipped');
        continue;
      }
      await this.takeOne(n);
    }
  }

  /** The room as a place to answer in, or null (encrypted: refused; not an allowed room). */
  private async contextOf(roomId: string): Promise<RoomContext | null> {
    if (await this.rooms.isEncrypted(roomId)) {
      await this.rooms.refuseEncrypted(roomId, (r, t) => this.egress.send(matrixCodec.encode({ roomId: r }), t, { plain: true }));
      return null;
    }
    const direct = await this.rooms.isDirect(roomId);
    if (!direct && this.opts.allowedRooms.length > 0 && !this.opts.allowedRooms.includes(roomId)) {
      this.logger.debug({ roomId }, 'matrix: room not on MATRIX_ALLOWED_ROOMS; ignored');
      return null;
    }
    return { roomId, botUserId: this.opts.userId, botNames: this.botNames, direct };
  }

  private async noteOwn(roomId: string, ev: Json): Promise<void> {
    const content = isRecord(ev.content) ? ev.content : {};
    const rel = isRecord(content['m.relates_to']) ? content['m.relates_to'] : {};
    const root = rel.rel_type === 'm.thread' && typeof rel.event_id === 'string' ? rel.event_id : undefined;
    let conversationId: string;
    try {
      conversationId = matrixCodec.encode({ roomId, ...(root && { threadRoot: root }) });
    } catch {
      return; // An id we cannot encode: nothing to remember.
    }
    await this.rooms.noteOwn(conversationId, content);
  }

  private async takeOne(n: Normalized): Promise<void> {
    const handler = this.handler;
    if (handler === null) throw new Error('matrix ingress is stopped');
    const { msg } = n;
    if (!n.mentioned) {
      if (!n.threadRoot || !(await this.opts.threads.has(msg.conversationId))) return;
    } else if (n.threadRoot) await this.opts.threads.add(msg.conversationId);
    // Read before the event counts as seen: should the memory not answer, the batch is taken again with this event.
    const press = msg.attachments.length === 0 ? await this.rooms.pressOf(msg.conversationId, msg.text) : undefined;
    if (!this.seen.add(msg.messageId)) return void this.logger.debug({ messageId: msg.messageId }, 'matrix: repeated event dropped');
    const final: InboundMessage = press ? { ...msg, text: '', press: { data: press } } : await this.withQuote(msg, n.replyToFetch);
    try {
      await handler(final);
    } catch (err) {
      // The homeserver refused what the gateway answered on the spot (a pairing code): taking the event again
      // would be refused the same way, so it counts as dealt with.
      if (isPermanent(err)) return void this.logger.warn({ err: err.message, messageId: msg.messageId }, 'matrix: answer to a message refused');
      // Not taken: the batch is taken again (its position was not saved), and this event with it.
      this.seen.delete(msg.messageId);
      throw err;
    }
    void this.client
      .call('read receipt', Method.Post, `/rooms/${seg(msg.chatId)}/receipt/m.read/${seg(msg.platformMessageId)}`, { body: {} })
      .catch((err: unknown) => this.logger.debug({ err: err instanceof Error ? err.message : String(err) }, 'matrix: read receipt not sent'));
  }

  /** A reply without the quoted text in its body: the quoted event is fetched (best effort). */
  private async withQuote(msg: InboundMessage, eventId: string | undefined): Promise<InboundMessage> {
    if (!eventId || !msg.quoted) return msg;
    try {
      const ev = await this.client.call<Json>('quoted event', Method.Get, `/rooms/${seg(msg.chatId)}/event/${seg(eventId)}`);
      const content = isRecord(ev.content) ? ev.content : {};
      const text = typeof content.body === 'string' ? content.body.slice(0, 4_000) : '';
      return { ...msg, quoted: { platformMessageId: eventId, text, fromBot: ev.sender === this.opts.userId } };
    } catch (err) {
      this.logger.debug({ err: err instanceof Error ? err.message : String(err) }, 'matrix: quoted event not readable');
      return msg;
    }
  }
}

const isPermanent = (err: unknown): err is PlatformError =>
  err instanceof PlatformError && !(err instanceof NetworkError || err instanceof RateLimitedError || err instanceof AuthError);

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
