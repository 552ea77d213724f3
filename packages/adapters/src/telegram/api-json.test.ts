import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Telegram, TelegramError } from 'telegraf';
import { afterEach, describe, expect, it } from 'vitest';
import { apiFailure, isAbortError, toPlatformError } from './api-errors.js';
import { normalizeApiRoot, TelegramApi, telegramAgent } from './api.js';
import { JsonCaller } from './api.js';

const TOKEN = '123456:SECRET-token';

interface Seen {
  method: string;
  path: string;
  contentType: string | undefined;
  body: unknown;
}

/** A Bot API server on 127.0.0.1 whose answer each test decides; it records what came in. */
async function botApi(answer: (seen: Seen, res: ServerResponse) => void): Promise<{ root: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const contentType = req.headers['content-type'];
      // An upload's multipart body is kept as text.
      const body = text && contentType === 'application/json' ? JSON.parse(text) : text || undefined;
      const s = { method: req.method ?? '', path: req.url ?? '', contentType, body };
      seen.push(s);
      answer(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    root: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
};

const servers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

async function serve(answer: (seen: Seen, res: ServerResponse) => void): Promise<{ root: string; seen: Seen[] }> {
  const s = await botApi(answer);
  servers.push(s.close);
  return s;
}

/** The calls every message makes (sendMessage, edits, typing, reactions, deletes, callback answers, drafts). */
const HOT_METHODS = [
  'sendMessage',
  'editMessageText',
  'editMessageReplyMarkup',
  'sendChatAction',
  'setMessageReaction',
  'deleteMessage',
  'answerCallbackQuery',
  'sendMessageDraft',
];

const caller = (root: string): JsonCaller => new JsonCaller(TOKEN, normalizeApiRoot(root), telegramAgent(root));
const never = new AbortController().signal;

describe('Bot API calls as plain JSON', () => {
  it('send what telegraf sends, to the same path (a root with a path prefix too), and give back the result', async () => {
    const { root, seen } = await serve((_s, res) => json(res, 200, { ok: true, result: { message_id: 7 } }));
    const payload = {
      chat_id: '42',
      text: 'hi <b>there</b>',
      parse_mode: 'HTML',
      reply_parameters: { message_id: 3 },
      message_thread_id: undefined,
      reply_markup: null,
    };
    for (const at of [root, `${root}/telegram`]) {
      const apiRoot = normalizeApiRoot(at);
      expect(await caller(at).call('sendMessage', payload, never)).toEqual({ message_id: 7 });
      await new Telegram(TOKEN, { apiRoot, webhookReply: false }).callApi('sendMessage', payload as never);
    }
    const [lean, viaTelegraf, leanPrefixed, viaTelegrafPrefixed] = seen;
    expect(lean).toEqual({
      method: 'POST',
      path: `/bot${TOKEN}/sendMessage`,
      contentType: 'application/json',
      body: { chat_id: '42', text: 'hi <b>there</b>', parse_mode: 'HTML', reply_parameters: { message_id: 3 } },
    });
    expect(viaTelegraf).toEqual(lean);
    expect(leanPrefixed.path).toBe(`/telegram/bot${TOKEN}/sendMessage`);
    expect(viaTelegrafPrefixed).toEqual(leanPrefixed);
  });

  it("an API error is telegraf's TelegramError, with Telegram's code, description and retry_after", async () => {
    const { root } = await serve((s, res) =>
      s.path.endsWith('/sendChatAction')
        ? json(res, 429, { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } })
        : json(res, 400, { ok: false, error_code: 400, description: "Bad Request: can't parse entities: unclosed tag" }),
    );
    const limited = await caller(root)
      .call('sendChatAction', { chat_id: 1, action: 'typing' }, never)
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(TelegramError);
    expect(apiFailure(limited)).toEqual({ code: 429, description: 'Too Many Requests: retry after 3', retryAfterSec: 3 });
    const refused = await caller(root)
      .call('sendMessage', { chat_id: 1, text: '<b>' }, never)
      .catch((e: unknown) => e);
    expect(toPlatformError(refused, 'send').name).toBe('FormattingError');
    expect((refused as TelegramError).on).toEqual({ method: 'sendMessage', payload: { chat_id: 1, text: '<b>' } });
  });

  it('an HTTP 5xx is a TelegramError with its status (a network error for callers); a body that is not JSON a clear error', async () => {
    const { root } = await serve((s, res) => {
      if (s.path.endsWith('/deleteMessage')) res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a captive portal</html>');
    });
    const gateway = await caller(root)
      .call('deleteMessage', { chat_id: 1, message_id: 2 }, never)
      .catch((e: unknown) => e);
    expect(apiFailure(gateway)).toEqual({ code: 502, description: 'Bad Gateway' });
    expect(toPlatformError(gateway, 'delete').name).toBe('NetworkError');
    const odd = await caller(root)
      .call('editMessageText', { chat_id: 1, message_id: 2, text: 'x' }, never)
      .catch((e: unknown) => e);
    expect((odd as Error).message).toBe('editMessageText: the Bot API answered HTTP 200 with a body that is not JSON');
  });

  it('a connection cut before the answer and an abort are errors that never name the token', async () => {
    const { root } = await serve((s, res) => {
      if (s.path.endsWith('/sendMessage')) res.socket?.destroy();
      // setMessageReaction: never answered; the caller gives up.
    });
    const cut = await caller(root)
      .call('sendMessage', { chat_id: 1, text: 'x' }, never)
      .catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(Error);
    expect(apiFailure(cut)).toBeUndefined();
    expect((cut as Error).message).toBe('sendMessage request failed: socket hang up');
    expect((cut as NodeJS.ErrnoException).code).toBe('ECONNRESET');
    expect(toPlatformError(cut, 'send').name).toBe('NetworkError');
    const stop = new AbortController();
    const pending = caller(root)
      .call('setMessageReaction', { chat_id: 1, message_id: 1, reaction: [] }, stop.signal)
      .catch((e: unknown) => e);
    stop.abort();
    const aborted = await pending;
    expect(isAbortError(aborted)).toBe(true);
    expect(String((aborted as Error).message)).not.toContain('SECRET');
  });

  it('TelegramApi sends every call but the uploads this way (telegraf never sees them), waits out a short 429 in place, and leaves the uploads to telegraf', async () => {
    let limited = 1;
    const { root, seen } = await serve((s, res) => {
      if (s.path.endsWith('/sendMessage') && limited-- > 0)
        json(res, 429, { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } });
      else json(res, 200, { ok: true, result: true });
    });
    const slept: number[] = [];
    const api = new TelegramApi({ token: TOKEN, apiRoot: root, logger: pino({ level: 'silent' }), sleep: async (ms) => void slept.push(ms) });
    const viaTelegraf: string[] = [];
    const callApi = api.telegram.callApi.bind(api.telegram);
    (api.telegram as unknown as { callApi: typeof callApi }).callApi = ((method: string, ...rest: unknown[]) => {
      viaTelegraf.push(method);
      return (callApi as (...a: unknown[]) => Promise<unknown>)(method, ...rest);
    }) as typeof callApi;
    expect(await api.call('sendMessage', { chat_id: 1, text: 'hello' })).toBe(true);
    expect(slept).toEqual([1000]);
    for (const method of HOT_METHODS) await api.call(method as 'deleteMessage', { chat_id: 1, message_id: 1 });
    expect(await api.call('getMe', {})).toBe(true);
    expect(await api.call('getUpdates', { offset: 3, timeout: 0 })).toBe(true);
    expect(await api.call('sendDocument', { chat_id: 1, document: { source: Buffer.from('a file'), filename: 'a.txt' } })).toBe(true);
    expect(viaTelegraf).toEqual(['sendDocument']);
    expect(seen.map((s) => s.path.split('/').pop())).toEqual(['sendMessage', 'sendMessage', ...HOT_METHODS, 'getMe', 'getUpdates', 'sendDocument']);
    expect(seen.at(-2)?.body).toEqual({ offset: 3, timeout: 0 });
    expect(seen.at(-1)?.contentType).toMatch(/^multipart\/form-data; boundary=/);
  });

  it("TelegramApi: a network failure names the method and the endpoint with the token's secret half redacted", async () => {
    const { root } = await serve((_s, res) => res.socket?.destroy());
    const api = new TelegramApi({ token: TOKEN, apiRoot: `${root}/telegram`, logger: pino({ level: 'silent' }) });
    const cut = await api.call('getMe', {}).catch((e: unknown) => e);
    expect((cut as Error).message).toBe(`getMe request failed: socket hang up (${root}/telegram/bot123456:[REDACTED]/getMe)`);
    expect(toPlatformError(cut, 'start-up').name).toBe('NetworkError');
    const upload = await api.call('sendDocument', { chat_id: 1, document: { source: Buffer.from('x'), filename: 'x.txt' } }).catch((e: unknown) => e);
    expect((upload as Error).message).toContain('/telegram/bot123456:[REDACTED]/sendDocument');
    for (const e of [cut, upload]) expect(String((e as Error).message)).not.toContain('SECRET');
  });
});
