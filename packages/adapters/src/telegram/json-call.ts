/**
 * The JSON transport of the Bot API client (api.ts): a call as one plain JSON POST on Node's HTTP client, over the
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
import http from 'node:http';
import https from 'node:https';
import { TelegramError } from 'telegraf';

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
