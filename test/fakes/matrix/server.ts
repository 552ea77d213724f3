/**
 * The Matrix homeserver stand-in: node:http on 127.0.0.1 serving the client-server API a bot without end-to-end
 * encryption uses (see index.ts), with access-token checks, the spec's error bodies, a real /sync long poll, and
 * test controls to play users, read what the bot did, and inject faults.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { clientRoutes, newToken } from './client.js';
import { createRoom, inviteBot, setDisplayName, shownMessages, uploadFromUser, userSend } from './control.js';
import { type Ctx, makeCtx, type Route, sendError, sendJson, tokenOf } from './http.js';
import { historyRoutes } from './history.js';
import { mediaRoutes } from './media.js';
import { roomRoutes } from './rooms.js';
import { batchToken, buildSync, timelineLimit } from './sync.js';
import type {
  CreateRoomOptions,
  FailOptions,
  JsonObject,
  MatrixFakeOptions,
  ReceiptRecord,
  RequestRecord,
  SendOptions,
  SentEvent,
  ShownMessage,
  TypingRecord,
  UploadRecord,
} from './types.js';
import { MatrixError, World } from './world.js';

type PathMatch = string | RegExp;

interface Failure {
  match: PathMatch;
  method?: string;
  remaining: number;
  /** null: the socket is destroyed instead of answered. */
  error: MatrixError | null;
}

const matches = (m: PathMatch, path: string): boolean => (typeof m === 'string' ? path.includes(m) : m.test(path));

export class MatrixFake {
  readonly serverName: string;
  readonly userId: string;
  readonly accessToken: string;
  readonly deviceId: string;
  readonly world: World;
  readonly sent: SentEvent[] = [];
  readonly typing: TypingRecord[] = [];
  readonly receipts: ReceiptRecord[] = [];
  readonly uploads: UploadRecord[] = [];
  readonly downloads: string[] = [];
  readonly joins: string[] = [];
  readonly leaves: string[] = [];
  readonly requests: RequestRecord[] = [];
  /** Held before every /sync answer (a slow homeserver). */
  syncDelayMs = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly routes: Route[];
  private readonly failures: Failure[] = [];
  private readonly rawSyncs: { body: string; status: number }[] = [];
  /** Part of every sync token: a token from another server (or a fuzzer) is refused. */
  private readonly nonce = randomBytes(4).toString('hex');
  private readonly maxSyncTimeoutMs: number;
  private port = 0;
  private readonly listeners = new Set<() => void>();
  /** Per raw /sync body served: how many requests had arrived by then. */
  private readonly rawServedAt: number[] = [];
  /** freshSyncToken()'s serial. */
  private tokensMade = 0;

  constructor(opts: MatrixFakeOptions = {}) {
    this.serverName = opts.serverName ?? 'localhost';
    this.userId = `@${opts.botLocalpart ?? 'herald'}:${this.serverName}`;
    this.accessToken = opts.accessToken ?? newToken();
    this.deviceId = opts.deviceId ?? 'HERALDDEV';
    this.maxSyncTimeoutMs = opts.maxSyncTimeoutMs ?? 30_000;
    this.world = new World(this.serverName, this.userId);
    this.world.profiles.set(this.userId, { displayname: opts.botDisplayName ?? 'Herald' });
    this.routes = [
      ...clientRoutes(this.world, this.deviceId),
      { method: 'GET', pattern: /^\/_matrix\/client\/(?:v3|r0)\/sync$/, handler: (ctx) => this.sync(ctx) },
      ...roomRoutes(this.world, this),
      ...historyRoutes(this.world, this.nonce),
      ...mediaRoutes(this.world, this, opts.maxUploadBytes ?? 50 * 1024 * 1024),
    ];
    this.world.onChange(() => this.notify());
    this.server = createServer((req, res) => void this.handle(req, res).finally(() => this.notify()));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  /** `http://127.0.0.1:<port>`: the homeserver base URL. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(port = 0): Promise<void> {
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops answering (connections refused) but keeps all state; `restart()` serves again on the same port. */
  async stop(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.stop();
  }

  // --- test controls ------------------------------------------------------------------------------------------

  createRoom(o: CreateRoomOptions): string {
    return createRoom(this.world, o);
  }

  invite(roomId: string, from: string, o: { isDirect?: boolean } = {}): string {
    return inviteBot(this.world, roomId, from, o.isDirect);
  }

  /** A user joins (or, with 'leave', leaves) a room; a kick of the bot is `setMembership(room, admin, bot, 'leave')`. */
  setMembership(roomId: string, sender: string, target: string, membership: 'join' | 'leave' | 'invite' | 'ban'): string {
    return this.world.setMembership(roomId, sender, target, membership).event_id;
  }

  send(roomId: string, sender: string, content: JsonObject, o: SendOptions = {}): string {
    return userSend(this.world, roomId, sender, content, o);
  }

  uploadFromUser(bytes: Buffer, contentType: string, filename?: string): string {
    return uploadFromUser(this.world, bytes, contentType, filename);
  }

  setDisplayName(userId: string, name: string): void {
    setDisplayName(this.world, userId, name);
  }

  /** The bot's messages in a room after edits and redactions (what a user sees). */
  shown(roomId: string): ShownMessage[] {
    return shownMessages(this.world, roomId);
  }

  sentIn(roomId: string, type = 'm.room.message'): SentEvent[] {
    return this.sent.filter((s) => s.roomId === roomId && s.type === type);
  }

  /** Requests whose path contains `fragment` (e.g. '/sync', '/send/'). */
  requestsTo(fragment: string): RequestRecord[] {
    return this.requests.filter((r) => r.path.includes(fragment));
  }

  /**
   * Checks `check` on every request, answer and stream change (and every 50 ms) until it returns something truthy;
   * throws after `timeoutMs` naming `what`.
   */
  async waitFor<T>(check: () => T | undefined | null | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v) return v;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`matrix fake waitFor: ${what} not met in ${timeoutMs} ms`);
      await this.activity(Math.min(50, left));
    }
  }

  /** How many nextSyncBody answers were served. */
  get rawSyncsServed(): number {
    return this.rawServedAt.length;
  }

  /**
   * The first /sync request that arrived after the `n`-th (1-based) nextSyncBody answer was served — the client
   * came back for more, so it is done with that answer — or undefined while there is none.
   */
  syncAfterRaw(n: number): RequestRecord | undefined {
    const from = this.rawServedAt[n - 1];
    if (from === undefined) return undefined;
    for (let i = from; i < this.requests.length; i++) if (this.requests[i].path.endsWith('/sync')) return this.requests[i];
    return undefined;
  }

  /** The current end of the stream as a /sync token (a fuzzed /sync answer's `next_batch` the fake takes back). */
  syncToken(): string {
    return batchToken(this.world.pos, this.nonce);
  }

  /**
   * The current end of the stream as a token no answer carried before: `syncToken()` with a serial of its own (a
   * server's tokens name several streams, so two tokens for one position need not be equal). A client that comes
   * back with it took the answer that carried it, not an earlier one for the same position.
   */
  freshSyncToken(): string {
    this.tokensMade += 1;
    return `${this.syncToken()}_${this.tokensMade}`;
  }

  private activity(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.listeners.add(done);
    });
  }

  private notify(): void {
    for (const fn of [...this.listeners]) fn();
  }

  /** The next `n` requests matching `match` (default: event sends) answer 429 M_LIMIT_EXCEEDED with retry_after_ms. */
  rateLimitNext(n: number, retryAfterMs: number, match: PathMatch = '/send/'): void {
    const error = new MatrixError(429, 'M_LIMIT_EXCEEDED', 'Too Many Requests', { retry_after_ms: retryAfterMs });
    this.failures.push({ match, remaining: n, error });
  }

  /** The next matching requests (path contains the string, or matches the RegExp) fail with `{errcode, error}`. */
  failNext(match: PathMatch, status: number, errcode: string, o: FailOptions = {}): void {
    const error = new MatrixError(status, errcode, o.error ?? `injected ${errcode}`, o.extra ?? {});
    this.failures.push({ match, remaining: o.times ?? 1, error, ...(o.method && { method: o.method }) });
  }

  /** The next matching requests get their connection destroyed, unanswered. */
  dropNext(match: PathMatch, times = 1): void {
    this.failures.push({ match, remaining: times, error: null });
  }

  /** Destroys every open connection now (a pending /sync included). */
  dropConnections(): void {
    for (const s of this.sockets) s.destroy();
  }

  /** The next /sync answers exactly this (a string is sent verbatim, anything else as JSON), then normal syncs resume. */
  nextSyncBody(raw: unknown, status = 200): void {
    this.rawSyncs.push({ body: typeof raw === 'string' ? raw : JSON.stringify(raw), status });
    this.world.wake();
  }

  // --- HTTP ---------------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const record: RequestRecord = { method: req.method ?? 'GET', path: safeDecode(path), query: Object.fromEntries(url.searchParams), status: 0 };
    this.requests.push(record);
    this.notify();
    try {
      const { route, params } = this.route(req.method ?? 'GET', path);
      if (!route.public) this.authenticate(req, url);
      const failure = this.takeFailure(record.method, record.path);
      if (failure === null) {
        req.socket.destroy();
        return;
      }
      if (failure) throw failure;
      const ctx = makeCtx(req, res, url, params);
      const out = await route.handler(ctx);
      if (out !== undefined && !ctx.isClosed()) sendJson(res, 200, out);
      record.status = ctx.isClosed() && out === undefined && !res.headersSent ? 0 : res.statusCode;
    } catch (err) {
      const e = err instanceof MatrixError ? err : new MatrixError(500, 'M_UNKNOWN', `fake failure: ${String(err)}`);
      record.status = e.status;
      record.errcode = e.errcode;
      sendError(res, e);
    }
  }

  private route(method: string, path: string): { route: Route; params: string[] } {
    let pathKnown = false;
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      pathKnown = true;
      if (route.method !== method) continue;
      const params = m.slice(1).filter((p): p is string => p !== undefined);
      try {
        return { route, params: params.map((p) => decodeURIComponent(p)) };
      } catch {
        throw new MatrixError(400, 'M_INVALID_PARAM', 'Malformed path encoding');
      }
    }
    if (pathKnown) throw new MatrixError(405, 'M_UNRECOGNIZED', 'Unrecognized request');
    throw new MatrixError(404, 'M_UNRECOGNIZED', 'Unrecognized request');
  }

  private authenticate(req: IncomingMessage, url: URL): void {
    const token = tokenOf(req, url);
    if (token === undefined) throw new MatrixError(401, 'M_MISSING_TOKEN', 'Missing access token');
    if (token !== this.accessToken) throw new MatrixError(401, 'M_UNKNOWN_TOKEN', 'Invalid access token passed.', { soft_logout: false });
  }

  /** The injected failure for this request: a MatrixError, null for a dropped connection, undefined for none. */
  private takeFailure(method: string, path: string): MatrixError | null | undefined {
    const i = this.failures.findIndex((f) => matches(f.match, path) && (!f.method || f.method === method));
    if (i === -1) return undefined;
    const f = this.failures[i];
    f.remaining -= 1;
    if (f.remaining <= 0) this.failures.splice(i, 1);
    return f.error;
  }

  private async sync(ctx: Ctx): Promise<JsonObject | undefined> {
    const q = ctx.url.searchParams;
    const since = this.parseSince(q.get('since'));
    const timeout = Number(q.get('timeout') ?? '0');
    if (!Number.isFinite(timeout) || timeout < 0) throw new MatrixError(400, 'M_INVALID_PARAM', 'timeout must be a non-negative integer');
    const limit = timelineLimit(this.filterOf(q.get('filter')));
    const fullState = q.get('full_state') === 'true';
    if (this.syncDelayMs > 0) await Promise.race([new Promise((r) => setTimeout(r, this.syncDelayMs)), ctx.closed]);
    const deadline = Date.now() + Math.min(timeout, this.maxSyncTimeoutMs);
    for (;;) {
      if (ctx.isClosed()) return undefined;
      const raw = this.rawSyncs.shift();
      if (raw) {
        this.rawServedAt.push(this.requests.length);
        ctx.res.writeHead(raw.status, { 'content-type': 'application/json' }).end(raw.body);
        return undefined;
      }
      const { body, empty } = buildSync(this.world, { since, upto: this.world.pos, timelineLimit: limit, fullState }, this.nonce);
      const left = deadline - Date.now();
      if (!empty || since === null || fullState || left <= 0) return body;
      await this.changeOrTimeout(left, ctx.closed);
    }
  }

  private async changeOrTimeout(ms: number, closed: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let off: (() => void) | undefined;
    try {
      await Promise.race([new Promise<void>((r) => (off = this.world.onChange(r))), new Promise<void>((r) => (timer = setTimeout(r, ms))), closed]);
    } finally {
      clearTimeout(timer);
      off?.();
    }
  }

  private parseSince(since: string | null): number | null {
    if (since === null) return null;
    const m = /^s(\d+)_([0-9a-f]+)(?:_\d+)?$/.exec(since);
    if (!m || m[2] !== this.nonce) throw new MatrixError(400, 'M_INVALID_PARAM', 'Invalid stream token');
    return Math.min(Number(m[1]), this.world.pos);
  }

  private filterOf(param: string | null): JsonObject | undefined {
    if (param === null) return undefined;
    if (param.startsWith('{')) {
      try {
        const f = JSON.parse(param) as unknown;
        if (typeof f === 'object' && f !== null && !Array.isArray(f)) return f as JsonObject;
      } catch {
        // answered below
      }
      throw new MatrixError(400, 'M_INVALID_PARAM', 'filter is not valid JSON');
    }
    const f = this.world.filters.get(param);
    if (!f) throw new MatrixError(400, 'M_INVALID_PARAM', 'No such filter');
    return f;
  }
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
