/**
 * The one Bot API client: every call Herald makes to Telegram — ingress (getMe, getUpdates, setWebhook, …),
 * egress (sendMessage, edits, typing, reactions, uploads) and files (getFile, the download URL) — goes through a
 * `TelegramApi`. It is the one place that knows the API root, the token and the shared connection pool, and the one
 * that words a failure: an API error is Telegram's `{error_code, description, parameters}` (telegraf's
 * `TelegramError`, read by api-errors.ts), a network failure names the method and the endpoint with the token
 * redacted.
 *
 * Every call is a plain JSON POST on Node's HTTP client (JsonCaller, at the end of this file), except the four upload methods: those go
 * as multipart through telegraf's `Telegram.callApi`, the one thing telegraf still does on the wire (besides its
 * Bot API types). The one retry here is the one Telegram asks for explicitly: a 429 with a short `retry_after`
 * is waited out in place a couple of times. Other failures are thrown as they came, so callers can pick their
 * platform-specific fallback before mapping them with `toPlatformError`.
 */
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import pRetry from 'p-retry';
import { Telegram, TelegramError } from 'telegraf';
import type { Opts, Telegram as ApiMethods } from 'telegraf/types';
import { apiFailure, isAbortError } from './api-errors.js';
import { TELEGRAM_DEFAULT_API_ROOT, TELEGRAM_MAX_INLINE_RETRY_AFTER_MS, TELEGRAM_RATE_LIMIT_RETRIES, type Sleep } from './config.js';

/**
 * The real Sleep: ends early, without throwing, when `signal` aborts (so stop() is never held up by a backoff). The
 * client's `retry_after` waits use it, and so do the ingress's (the poller's) unless a test gives its own.
 */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** telegraf types its `signal` option with the abort-controller polyfill; node-fetch accepts Node's own. */
type CallApiOptions = NonNullable<Parameters<Telegram['callApi']>[2]>;

export interface TelegramApiOptions {
  token: string;
  apiRoot?: string;
  logger: Logger;
  sleep?: Sleep;
  maxInlineRetryAfterMs?: number;
  /** A call with no answer for this long fails (getUpdates: its long-poll timeout plus this). Default 30 s. */
  callTimeoutMs?: number;
}

/**
 * Without a deadline a connection that died silently (a NAT dropping it, a black-holed route) leaves a call, and
 * the poll loop with it, waiting forever while health still says connected.
 */
const TELEGRAM_CALL_TIMEOUT_MS = 30_000;
/** An upload (up to 50 MB, or more through a local Bot API server) is given this long on top. */
const TELEGRAM_UPLOAD_EXTRA_MS = 300_000;
/** The methods Herald sends a file with: multipart, through telegraf; every other call is JSON. */
const UPLOAD_METHODS = ['sendPhoto', 'sendDocument', 'sendVoice', 'sendAudio'] as const;
export type UploadMethod = (typeof UPLOAD_METHODS)[number];
const isUpload = (method: string): method is UploadMethod => (UPLOAD_METHODS as readonly string[]).includes(method);
/** What stands for the token's secret half in an error (telegraf's own wording, kept for its errors and ours alike). */
const REDACTED = '[REDACTED]';

/**
 * Connections to one Bot API server, at most, shared by every bot of the process. telegraf's own agent has no
 * bound (and for an http:// root it uses Node's global agent, unbounded too): 5,000 replies at once opened 5,000
 * connections, and all but 256 were closed again after the burst — socket connects and closes were ≈ 5 % of a busy
 * worker's CPU, their buffers hundreds of MB. Telegram takes about 30 messages a second from a bot, so a call that
 * waits a moment for a free connection loses nothing; a long poll holds one connection per bot.
 */
export const TELEGRAM_MAX_SOCKETS = 100;
/**
 * An idle connection closes after this long. Node's agent follows a server's `Keep-Alive: timeout=N` (less a
 * second) only when it has an idle timeout of its own: without one, a reply could go out on a connection the server
 * was closing that moment, and fail (the benchmark saw dozens a run, against the stand-in's 5 s).
 */
const TELEGRAM_IDLE_MS = 30_000;
const AGENT_OPTIONS = {
  keepAlive: true,
  keepAliveMsecs: 10_000,
  timeout: TELEGRAM_IDLE_MS,
  maxSockets: TELEGRAM_MAX_SOCKETS,
  maxFreeSockets: TELEGRAM_MAX_SOCKETS,
};
const agents = { http: new http.Agent(AGENT_OPTIONS), https: new https.Agent(AGENT_OPTIONS) };

/** The shared connection pool for an API root (Node's agents keep the bound per server). */
export function telegramAgent(apiRoot: string): http.Agent {
  return apiRoot.startsWith('http://') ? agents.http : agents.https;
}

/**
 * telegraf resolves method URLs against the API root, so a root with a path but no trailing slash
 * (`http://host:8081/telegram`, a Bot API server behind a proxy) silently loses the path. Add the slash.
 */
export function normalizeApiRoot(root: string): string {
  const url = new URL(root);
  if (url.pathname !== '/' && !url.pathname.endsWith('/')) url.pathname += '/';
  return url.pathname === '/' ? root.replace(/\/+$/, '') : url.toString();
}

export class TelegramApi {
  /** telegraf's client, for the multipart uploads only (UPLOAD_METHODS). */
  readonly telegram: Telegram;
  /** Every other call. */
  private readonly json: JsonCaller;
  private readonly token: string;
  private readonly apiRoot: string;
  private readonly logger: Logger;
  private readonly sleep: Sleep;
  private readonly maxInlineRetryAfterMs: number;
  private readonly callTimeoutMs: number;

  constructor(opts: TelegramApiOptions) {
    // webhookReply: false — every call is a real HTTP request with a real result, even inside a webhook.
    const apiRoot = normalizeApiRoot(opts.apiRoot ?? TELEGRAM_DEFAULT_API_ROOT);
    this.telegram = new Telegram(opts.token, { apiRoot, webhookReply: false });
    // Set after construction: telegraf drops any agent given for an http:// root (a local Bot API server).
    (this.telegram.options as { agent?: http.Agent }).agent = telegramAgent(apiRoot);
    this.json = new JsonCaller(opts.token, apiRoot, telegramAgent(apiRoot));
    this.token = opts.token;
    this.apiRoot = apiRoot;
    this.logger = opts.logger;
    this.sleep = opts.sleep ?? realSleep;
    this.maxInlineRetryAfterMs = opts.maxInlineRetryAfterMs ?? TELEGRAM_MAX_INLINE_RETRY_AFTER_MS;
    this.callTimeoutMs = opts.callTimeoutMs ?? TELEGRAM_CALL_TIMEOUT_MS;
  }

  /**
   * Where a file getFile named is served: `<root>/file/bot<token>/<path>`. The URL holds the token: use it for the
   * request only, never log, store or quote it.
   */
  fileUrl(filePath: string): string {
    return `${this.apiRoot.replace(/\/+$/, '')}/file/bot${this.token}/${filePath}`;
  }

  /** A file upload: the payload holds the file as `{ source, filename }` in the method's field (upload.ts). */
  upload(method: UploadMethod, payload: Record<string, unknown>, signal?: AbortSignal): Promise<{ message_id: number }> {
    // telegraf types each method's payload on its own; the four upload methods share one shape here.
    const call = this.call.bind(this) as (m: UploadMethod, p: Record<string, unknown>, s?: AbortSignal) => Promise<{ message_id: number }>;
    return call(method, payload, signal);
  }

  async call<M extends keyof ApiMethods>(method: M, payload: Opts<M>, signal?: AbortSignal): Promise<ReturnType<ApiMethods[M]>> {
    // A long poll is allowed its own timeout on top of the deadline.
    const pollSec = method === 'getUpdates' ? Number((payload as { timeout?: number }).timeout ?? 0) : 0;
    const deadlineMs = pollSec * 1000 + this.callTimeoutMs + (isUpload(method) ? TELEGRAM_UPLOAD_EXTRA_MS : 0);
    return pRetry(() => this.callOnce(method, payload, deadlineMs, signal), {
      retries: TELEGRAM_RATE_LIMIT_RETRIES,
      // The only wait is the one Telegram names (retry_after), slept below; no backoff of our own on top.
      minTimeout: 0,
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        const waitMs = this.inlineWaitMs(error);
        if (waitMs === null || retriesLeft === 0 || signal?.aborted) return;
        this.logger.warn({ method, retryAfterMs: waitMs, attempt: attemptNumber }, 'telegram rate limit: waiting before retry');
        await this.sleep(waitMs, signal);
      },
      // Not through p-retry's own signal: an aborted call rejects with what the call threw, as callers expect.
      shouldRetry: ({ error }) => !signal?.aborted && this.inlineWaitMs(error) !== null,
    });
  }

  /** A 429 whose retry_after is short enough to wait out inside the call; null for anything else. */
  private inlineWaitMs(err: unknown): number | null {
    const f = apiFailure(err);
    if (f?.code !== 429) return null;
    const waitMs = (f.retryAfterSec ?? 1) * 1000;
    return waitMs > this.maxInlineRetryAfterMs ? null : waitMs;
  }

  /**
   * One request, aborted by the caller's signal or after `deadlineMs`. The caller's signal is often a
   * process-lifetime one (the poller's), so it gets a listener for this call only, removed when the call ends;
   * `AbortSignal.any` would tie a new dependent signal (and its timer) to it on every call.
   */
  private async callOnce<M extends keyof ApiMethods>(
    method: M,
    payload: Opts<M>,
    deadlineMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ReturnType<ApiMethods[M]>> {
    const call = new AbortController();
    let timedOut = false;
    const onAbort = (): void => call.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      call.abort();
    }, deadlineMs);
    timer.unref();
    try {
      if (isUpload(method)) return await this.telegram.callApi(method, payload, { signal: call.signal } as unknown as CallApiOptions);
      return await this.json.call<ReturnType<ApiMethods[M]>>(method, payload, call.signal);
    } catch (err) {
      if (timedOut && !signal?.aborted) {
        throw new Error(`no answer to ${method} within ${Math.round(deadlineMs / 1000)} s`, { cause: err });
      }
      throw this.worded(err, method);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * A failure as callers see it. An API error or an abort as it came. A network failure names the endpoint, token
   * redacted (`…/bot123:[REDACTED]/getMe`), so an operator can tell which server and which bot; telegraf's own
   * errors name it already. Whatever the wording, the token's secret half never leaves this client.
   */
  private worded(err: unknown, method: string): unknown {
    if (!(err instanceof Error) || apiFailure(err) !== undefined || isAbortError(err)) return err;
    const secret = this.token.slice(this.token.indexOf(':') + 1);
    if (secret.length > 0 && err.message.includes(secret)) err.message = err.message.replaceAll(secret, REDACTED);
    if (!isUpload(method)) err.message += ` (${this.endpoint(method)})`;
    return err;
  }

  /** The URL a method is called at, the token's secret half redacted. */
  private endpoint(method: string): string {
    const colon = this.token.indexOf(':');
    const bot = colon > 0 ? `${this.token.slice(0, colon)}:${REDACTED}` : REDACTED;
    return `${this.apiRoot.endsWith('/') ? this.apiRoot : `${this.apiRoot}/`}bot${bot}/${method}`;
  }
}

/** telegraf's JSON replacer: fields set to null or undefined are not sent. */
const replacer = (_key: string, value: unknown): unknown => (value == null ? undefined : value);

interface Target {
  send: typeof http.request;
  hostname: string;
  port: string;
  /** The path up to the method name: `<root path>bot<token>/`. */
  base: string;
}

function networkError(method: string, err: NodeJS.ErrnoException): Error {
  return Object.assign(new Error(`${method} request failed: ${err.message}`, { cause: err }), { code: err.code });
}

/**
 * The JSON transport of the Bot API client (JsonCaller, below): a call as one plain JSON POST on Node's HTTP client, over the
 * shared pool. Every method Herald calls goes this way except the uploads, which need multipart (telegraf's).
 *
 * Why not telegraf's `callApi` for these too: it sends each call through node-fetch (its Headers, Request, Response
 * and body stream classes, a URL parsed per call, and a scan of the payload for files), ≈ 50 µs of CPU a call more
 * than this (measured against the Telegram stand-in, 5,000 sendMessage calls, 50 at once: ≈ 110 against ≈ 60 µs for
 * both sides together) — about 5 % of what a whole message costs a worker. The request, the answer and the errors are
 * telegraf's: the same JSON body (null and undefined fields left out), the same `TelegramError` for an API error or
 * an HTTP 5xx; a network failure is Node's own error with the method in front (`sendMessage request failed: connect
 * ECONNREFUSED …`, its `code` kept), an abort Node's `AbortError`. No message here names the URL, which holds the
 * token (the client adds the endpoint, redacted).
 */
export class JsonCaller {
  private readonly target: Target;

  /** `apiRoot` as normalizeApiRoot leaves it; `agent` the pool the Bot API server's connections share. */
  constructor(
    token: string,
    apiRoot: string,
    private readonly agent: http.Agent,
  ) {
    // Resolved once, as telegraf resolves `./bot<token>/<method>` against the root for every call.
    const url = new URL(`./bot${token}/`, apiRoot.endsWith('/') ? apiRoot : `${apiRoot}/`);
    const secure = url.protocol === 'https:';
    this.target = { send: secure ? https.request : http.request, hostname: url.hostname, port: url.port, base: url.pathname };
  }

  call<T>(method: string, payload: object, signal: AbortSignal): Promise<T> {
    const body = JSON.stringify(payload, replacer);
    const { send, hostname, port, base } = this.target;
    return new Promise<T>((resolve, reject) => {
      const req = send(
        {
          method: 'POST',
          hostname,
          port,
          path: base + method,
          agent: this.agent,
          signal,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 500) {
              reject(new TelegramError({ error_code: status, description: res.statusMessage ?? '' }, { method, payload }));
              return;
            }
            let data: { ok?: boolean; result?: T; error_code?: number; description?: string };
            try {
              data = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof data;
            } catch {
              reject(new Error(`${method}: the Bot API answered HTTP ${status} with a body that is not JSON`));
              return;
            }
            if (data.ok === true) resolve(data.result as T);
            else reject(new TelegramError(data as ConstructorParameters<typeof TelegramError>[0], { method, payload }));
          });
        },
      );
      // An abort stays Node's AbortError; a network failure says which call failed (node-fetch's said it by the URL).
      req.on('error', (err: NodeJS.ErrnoException) => reject(err.name === 'AbortError' ? err : networkError(method, err)));
      req.end(body);
    });
  }
}
