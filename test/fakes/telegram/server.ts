/**
 * The Telegram Bot API stand-in: node:http on 127.0.0.1 serving `/bot<token>/<method>` (JSON, form-encoded,
 * multipart text fields or query string), `/file/bot<token>/<path>` downloads, a real getUpdates long poll and
 * webhook delivery, plus a test API to inject user messages, read what the bot sent and inject failures.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, telegramErrors, type TelegramErrorBody } from './errors.js';
import { buildUserMessage, createTopic, userOf, type InjectMessageOptions } from './inject.js';
import { Described, METHODS } from './methods.js';
import { queryParams, readBody, toInt } from './http-body.js';
import { World, type Json, type JsonObject, type StoredUpdate } from './state.js';
import type { ApiCallRecord, FakeContext, Failure, SentRecord, UploadLimits, WebhookConfig, WebhookDelivery } from './types.js';
import { requestTooLarge, UPLOAD_METHODS } from './uploads.js';
import type { UploadedPart } from '../media/multipart.js';

export interface TelegramFakeOptions {
  /** Default `123456789:AAH-test-token`; the part before the colon is the bot's user id, as in Telegram. */
  token?: string;
  botUsername?: string;
  botName?: string;
  /** Pause between webhook delivery attempts of a refused update. */
  webhookRetryMs?: number;
  /** Attempts before Telegram gives up on one update. */
  webhookMaxAttempts?: number;
  /** Upload limits (default Telegram's: 50 MB a request, 10 MB a photo); tests shrink them. */
  uploadLimits?: Partial<UploadLimits>;
}

interface PendingPoll {
  respond: (status: number, body: JsonObject) => void;
  timer: NodeJS.Timeout;
  params: JsonObject;
}

export class TelegramFake {
  readonly token: string;
  readonly world: World;
  readonly sent: SentRecord[] = [];
  readonly calls: ApiCallRecord[] = [];
  readonly webhookDeliveries: WebhookDelivery[] = [];
  /** Update ids returned by getUpdates at least once (whether or not confirmed since): "the bot has read it". */
  readonly handedOut = new Set<number>();
  private readonly server: Server;
  private readonly failures = new Map<string, { failure: Failure; when?: (params: JsonObject) => boolean }[]>();
  private poll: PendingPoll | null = null;
  private webhookConfig: WebhookConfig | null = null;
  private delivering = false;
  private stopped = false;
  private readonly webhookAbort = new AbortController();
  private port = 0;
  private readonly ctx: FakeContext;

  constructor(private readonly opts: TelegramFakeOptions = {}) {
    this.token = opts.token ?? '123456789:AAH-test-token';
    const botId = Number(this.token.split(':')[0]);
    this.world = new World({
      id: Number.isSafeInteger(botId) ? botId : 123456789,
      username: opts.botUsername ?? 'herald_test_bot',
      first_name: opts.botName ?? 'Herald',
    });
    this.server = createServer((req, res) => void this.handle(req, res));
    const self = this;
    this.ctx = {
      world: this.world,
      sent: this.sent,
      get webhook() {
        return self.webhookConfig;
      },
      setWebhook: (config) => this.setWebhook(config),
      commands: null,
      allowedUpdates: null,
      longPoll: (params, onClose) => this.longPoll(params, onClose),
      limits: { requestBytes: 50 * 1024 * 1024, photoBytes: 10 * 1024 * 1024, ...opts.uploadLimits },
      callbackQueries: new Map(),
      draftsSupported: true,
    };
  }

  /** `http://127.0.0.1:<port>`: pass as telegraf's `apiRoot`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get apiRoot(): string {
    return this.url;
  }

  get bot(): { id: number; username: string; first_name: string } {
    return this.world.bot;
  }

  get webhook(): WebhookConfig | null {
    return this.webhookConfig;
  }

  /** The bot's command menu as last set with setMyCommands. */
  get commands(): Json {
    return this.ctx.commands;
  }

  async listen(port = 0): Promise<void> {
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
    this.stopped = false;
  }

  /** Stops answering (connections refused) but keeps all state; `restart()` brings it back on the same port. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.endPoll(200, { ok: true, result: [] });
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    this.webhookAbort.abort();
    if (this.server.listening) await this.stop();
    this.stopped = true;
  }

  /**
   * The next `times` calls of `method` fail: with a Telegram error body, or 'network' (socket destroyed).
   * With `when`, only calls whose parameters match count (e.g. only those with parse_mode HTML).
   */
  failNext(method: string, failure: Failure, times = 1, when?: (params: JsonObject) => boolean): void {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push({ failure, ...(when && { when }) });
    this.failures.set(method, queue);
  }

  private takeFailure(method: string, params: JsonObject): Failure | undefined {
    const queue = this.failures.get(method);
    const index = queue?.findIndex((f) => !f.when || f.when(params)) ?? -1;
    if (!queue || index === -1) return undefined;
    return queue.splice(index, 1)[0].failure;
  }

  /** A user writes to the bot. Returns the update (also queued for getUpdates or pushed to the webhook). */
  injectMessage(o: InjectMessageOptions): JsonObject {
    return this.injectUpdate({ message: buildUserMessage(this.world, o) });
  }

  /**
   * A user presses an inline keyboard button under a bot message (a `callback_query` update). The button must be
   * there. Returns the callback query id.
   */
  pressButton(o: { chatId: number; userId: number; messageId: number; data: string; firstName?: string }): string {
    const chat = this.world.chats.get(o.chatId);
    const message = chat?.messages.get(o.messageId);
    if (!chat || !message) throw new Error(`no message ${o.messageId} in chat ${o.chatId}`);
    const keyboard = (message.reply_markup as JsonObject | undefined)?.inline_keyboard;
    const buttons = Array.isArray(keyboard) ? keyboard.flat() : [];
    if (!buttons.some((b) => typeof b === 'object' && b !== null && !Array.isArray(b) && b.callback_data === o.data)) {
      throw new Error(`no button with callback_data ${o.data} under message ${o.messageId}`);
    }
    const id = `${o.userId}${Date.now()}${this.ctx.callbackQueries.size}`;
    this.ctx.callbackQueries.set(id, { answered: false });
    this.injectUpdate({
      callback_query: {
        id,
        from: { id: o.userId, is_bot: false, first_name: o.firstName ?? `User${o.userId}`, language_code: 'en' },
        message,
        chat_instance: String(-o.chatId),
        data: o.data,
      },
    });
    return id;
  }

  /** Switches sendMessageDraft off (a Bot API server older than 9.3: 404 Not Found) or on again. */
  supportDrafts(on: boolean): void {
    this.ctx.draftsSupported = on;
  }

  /** Queues any update object; `update_id` is assigned. */
  injectUpdate(update: JsonObject): JsonObject {
    const stored = this.world.enqueue(update);
    this.wakePoll();
    void this.deliverWebhook();
    return stored.update;
  }

  /** Queues the same update again (Telegram redelivering after a timeout). */
  redeliver(update: JsonObject): void {
    this.world.updates.push({ update_id: update.update_id as number, update });
    this.wakePoll();
    void this.deliverWebhook();
  }

  /** Opens a forum topic in a supergroup (making it a forum); returns the topic id. */
  createTopic(chatId: number, name: string, userId = 1): number {
    const chat = this.world.ensureChat(chatId, 'supergroup', { isForum: true });
    return createTopic(this.world, chat, name, userOf({ chatId, userId }));
  }

  /** Turns reactions off in a chat: every setMessageReaction there answers REACTION_INVALID. */
  disableReactions(chatId: number): void {
    const chat = this.world.chats.get(chatId);
    if (!chat) throw new Error(`no chat ${chatId}`);
    chat.reactionsEnabled = false;
  }

  /** Updates not yet confirmed by an offset (or delivered to the webhook). */
  pendingUpdates(): number {
    return this.world.updates.length;
  }

  /** Calls of one method, for asserting retries. */
  callsOf(method: string): ApiCallRecord[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Polls until `check` returns something truthy (or throws after `timeoutMs`). */
  async waitFor<T>(check: () => T | undefined | null | false, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v) return v;
      if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  // --- HTTP ----------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) return this.serveFile(file[1], file[2], res);
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!m) return send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method] = m;
    let params: JsonObject;
    let files: UploadedPart[];
    let size: number;
    try {
      const body = await readBody(req);
      ({ files, size } = body);
      params = { ...queryParams(url), ...body.params };
    } catch {
      return send(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid request body' });
    }
    const record = (status: number, description?: string): void => {
      this.calls.push({ method, params, status, ...(description !== undefined && { description }) });
    };
    // Telegram's front end refuses an oversized request before the Bot API sees it.
    if (size > this.ctx.limits.requestBytes) return this.fail(res, requestTooLarge().body, record);
    if (token !== this.token) {
      record(401, 'Unauthorized');
      return send(res, 401, { ok: false, ...telegramErrors.unauthorized() });
    }
    const failure = this.takeFailure(method, params);
    if (failure === 'network') {
      record(0, 'network failure injected');
      req.socket.destroy();
      return;
    }
    if (failure === 'silence') {
      record(0, 'silence injected'); // never answered; closeAllConnections() on stop cleans it up
      return;
    }
    if (failure) return this.fail(res, failure, record);
    const handler = METHODS[method] ?? UPLOAD_METHODS[method];
    if (!handler) {
      record(404, 'Not Found');
      return send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    }
    try {
      const onClose = (cb: () => void): void => {
        res.on('close', () => {
          if (!res.writableFinished) cb();
        });
      };
      const result = await handler(this.ctx, params, onClose, files);
      if (res.destroyed) return;
      if (result instanceof Described) {
        record(200);
        return send(res, 200, { ok: true, result: result.result, description: result.description });
      }
      record(200);
      send(res, 200, { ok: true, result });
    } catch (err) {
      if (err instanceof ApiError) return this.fail(res, err.body, record);
      record(500, String(err));
      send(res, 500, { ok: false, error_code: 500, description: `Internal Server Error: ${String(err)}` });
    }
  }

  private fail(res: ServerResponse, body: TelegramErrorBody, record: (s: number, d?: string) => void): void {
    record(body.error_code, body.description);
    send(res, body.error_code, { ok: false, ...body } as unknown as JsonObject);
  }

  private serveFile(token: string, path: string, res: ServerResponse): void {
    const file = [...this.world.files.values()].find((f) => f.filePath === path);
    if (token !== this.token || !file) return send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.content.length });
    res.end(file.content);
  }

  // --- getUpdates long poll ---------------------------------------------------------------------------------

  private longPoll(params: JsonObject, onClose: (cb: () => void) => void): Promise<Json> {
    const offset = toInt(params.offset);
    if (offset !== undefined) this.world.confirm(offset);
    if (Array.isArray(params.allowed_updates)) this.ctx.allowedUpdates = params.allowed_updates.map(String);
    // A newer request always wins; the one it replaces is told why.
    this.endPoll(409, { ok: false, ...telegramErrors.pollConflict() });
    const ready = this.available(params);
    const timeoutSec = toInt(params.timeout) ?? 0;
    if (ready.length > 0 || timeoutSec <= 0) return Promise.resolve(ready);
    return new Promise<Json>((resolve, reject) => {
      const poll: PendingPoll = {
        params,
        timer: setTimeout(() => this.endPoll(200, { ok: true, result: [] }), timeoutSec * 1000),
        respond: (status, body) => {
          if (status === 200) resolve(body.result ?? []);
          else reject(new ApiError(body as unknown as TelegramErrorBody));
        },
      };
      this.poll = poll;
      onClose(() => {
        if (this.poll === poll) {
          clearTimeout(poll.timer);
          this.poll = null;
        }
      });
    });
  }

  private available(params: JsonObject): Json[] {
    const limit = Math.min(Math.max(toInt(params.limit) ?? 100, 1), 100);
    const allowed = this.ctx.allowedUpdates;
    const ready = this.world.updates
      .filter((u) => allowed === null || allowed.length === 0 || Object.keys(u.update).some((k) => allowed.includes(k)))
      .slice(0, limit);
    for (const u of ready) this.handedOut.add(u.update_id);
    return ready.map((u) => u.update);
  }

  private wakePoll(): void {
    if (!this.poll) return;
    const ready = this.available(this.poll.params);
    if (ready.length > 0) this.endPoll(200, { ok: true, result: ready });
  }

  private endPoll(status: number, body: JsonObject): void {
    const poll = this.poll;
    if (!poll) return;
    this.poll = null;
    clearTimeout(poll.timer);
    poll.respond(status, body);
  }

  // --- webhook ------------------------------------------------------------------------------------------

  private setWebhook(config: WebhookConfig | null): void {
    this.webhookConfig = config;
    if (config) {
      this.endPoll(409, { ok: false, error_code: 409, description: 'Conflict: terminated by setWebhook request' });
      void this.deliverWebhook();
    }
  }

  /** Posts queued updates to the webhook one at a time, in order, retrying refused ones like Telegram does. */
  private async deliverWebhook(): Promise<void> {
    if (this.delivering) return;
    this.delivering = true;
    try {
      const attempts = new Map<number, number>();
      while (this.webhookConfig && !this.stopped && this.world.updates.length > 0) {
        const next: StoredUpdate = this.world.updates[0];
        const hook = this.webhookConfig;
        let status: number | 'network-error';
        try {
          const res = await fetch(hook.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(hook.secret_token !== undefined && { 'x-telegram-bot-api-secret-token': hook.secret_token }),
            },
            body: JSON.stringify(next.update),
            signal: this.webhookAbort.signal,
          });
          status = res.status;
          await res.arrayBuffer();
        } catch {
          if (this.webhookAbort.signal.aborted) return;
          status = 'network-error';
        }
        this.webhookDeliveries.push({ update_id: next.update_id, status });
        const n = (attempts.get(next.update_id) ?? 0) + 1;
        attempts.set(next.update_id, n);
        if ((typeof status === 'number' && status >= 200 && status < 300) || n >= (this.opts.webhookMaxAttempts ?? 5)) {
          if (this.world.updates[0] === next) this.world.updates.shift();
        } else {
          await new Promise((r) => setTimeout(r, this.opts.webhookRetryMs ?? 50));
        }
      }
    } finally {
      this.delivering = false;
    }
  }
}

export async function startTelegramFake(opts: TelegramFakeOptions = {}): Promise<TelegramFake> {
  const fake = new TelegramFake(opts);
  await fake.listen();
  return fake;
}

function send(res: ServerResponse, status: number, body: JsonObject): void {
  if (res.headersSent || res.destroyed) return;
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}
