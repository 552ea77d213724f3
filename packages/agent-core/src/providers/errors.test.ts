/**
 * Classification of failures the scripted stand-ins do not produce: errors sent inside a stream, dropped
 * connections, other OpenAI-compatible servers' bodies, and retry-after variants. Each case is a real HTTP
 * exchange with a tiny server, read through the real SDK.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from './anthropic.js';
import { classifyError, retryAfterMsFrom } from './errors.js';
import { createOpenAIProvider } from './openai.js';
import { ProviderError, type CompletionRequest, type Provider } from './types.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server | undefined;

afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise<void>((resolve) => s.close(() => resolve()));
});

async function serve(handler: Handler): Promise<string> {
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  server = s;
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

async function openaiAgainst(handler: Handler): Promise<Provider> {
  const url = await serve(handler);
  return createOpenAIProvider({ provider: 'openai', model: 'local-model', apiKey: 'k', baseUrl: `${url}/v1` });
}
async function anthropicAgainst(handler: Handler): Promise<Provider> {
  const url = await serve(handler);
  return createAnthropicProvider({ provider: 'anthropic', model: 'claude-haiku-4-5', apiKey: 'k', baseUrl: url });
}

const request = (): CompletionRequest => ({
  systemPrompt: 'sys',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  signal: new AbortController().signal,
});

async function failure(p: Provider): Promise<ProviderError> {
  const err = await p.complete(request()).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

const sse = (res: ServerResponse, frames: string[], end = true): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const f of frames) res.write(f);
  if (end) res.end();
};

describe('classifyError through the SDKs', () => {
  it('Anthropic overloaded_error sent inside the stream → overloaded', async () => {
    const p = await anthropicAgainst((_req, res) =>
      sse(res, [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      ]),
    );
    expect((await failure(p)).kind).toBe('overloaded');
  });

  it('OpenAI-compatible error chunk inside the stream → classified by its type', async () => {
    const p = await openaiAgainst((_req, res) =>
      sse(res, ['data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n']),
    );
    expect((await failure(p)).kind).toBe('server_error');
  });

  it('a stream cut off before the model finished → retryable server_error', async () => {
    const p = await openaiAgainst((_req, res) => {
      sse(
        res,
        [
          'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n',
        ],
        false,
      );
      setTimeout(() => res.destroy(), 20);
    });
    expect((await failure(p)).kind).toBe('server_error');
  });

  it('a stream that ends cleanly without a stop_reason → server_error, not a silent empty answer', async () => {
    const p = await anthropicAgainst((_req, res) =>
      sse(res, [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
      ]),
    );
    const err = await failure(p);
    expect(err.kind).toBe('server_error');
    expect(err.message).toContain('stop_reason');
  });

  it('llama.cpp exceed_context_size_error → context_overflow with n_ctx as the limit', async () => {
    const p = await openaiAgainst(
      json(400, {
        error: {
          code: 400,
          message: 'the request exceeds the available context size, try increasing it',
          type: 'exceed_context_size_error',
          n_prompt_tokens: 9000,
          n_ctx: 8192,
        },
      }),
    );
    const err = await failure(p);
    expect(err.kind).toBe('context_overflow');
    expect(err.contextLimit).toBe(8192);
  });

  it('Anthropic "input length and max_tokens exceed context limit" → context_overflow with the limit', async () => {
    const p = await anthropicAgainst(
      json(400, {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again',
        },
      }),
    );
    const err = await failure(p);
    expect(err.kind).toBe('context_overflow');
    expect(err.contextLimit).toBe(200_000);
    expect(err.promptTokens).toBe(188_240);
  });

  it.each([
    [
      "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (5000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
      8192,
      5000,
    ],
    [
      "'max_tokens' is too large: 4000. This model's maximum context length is 8192 tokens and your request has 5000 input tokens (4000 > 8192 - 5000).",
      8192,
      5000,
    ],
    ["This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", 8192, undefined],
  ])('OpenAI-compatible overflow %#: the limit and, when named, the prompt size', async (message, limit, prompt) => {
    const p = await openaiAgainst(json(400, { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } }));
    const err = await failure(p);
    expect([err.kind, err.contextLimit, err.promptTokens]).toEqual(['context_overflow', limit, prompt]);
  });

  it('OpenAI insufficient_quota (a 429 that waiting does not fix) → auth', async () => {
    const p = await openaiAgainst(
      json(429, {
        error: {
          message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota',
          param: null,
          code: 'insufficient_quota',
        },
      }),
    );
    expect((await failure(p)).kind).toBe('auth');
  });

  it('429 with retry-after-ms prefers the millisecond header', async () => {
    const p = await openaiAgainst(
      json(
        429,
        { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
        { 'retry-after-ms': '1500', 'retry-after': '2' },
      ),
    );
    const err = await failure(p);
    expect(err.kind).toBe('rate_limit');
    expect(err.retryAfterMs).toBe(1500);
  });

  it('429 without headers falls back to the "try again in" hint in the message', async () => {
    const p = await openaiAgainst(
      json(429, {
        error: {
          message: 'Rate limit reached for gpt-4o on tokens per min (TPM). Please try again in 820ms.',
          type: 'tokens',
          param: null,
          code: 'rate_limit_exceeded',
        },
      }),
    );
    expect((await failure(p)).retryAfterMs).toBe(820);
  });

  it('403 permission_error → auth', async () => {
    const p = await anthropicAgainst(
      json(403, { type: 'error', error: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' } }),
    );
    expect((await failure(p)).kind).toBe('auth');
  });

  it('other 400s → format_error', async () => {
    const p = await anthropicAgainst(
      json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'tools.0.name: String should match pattern' } }),
    );
    expect((await failure(p)).kind).toBe('format_error');
  });
});

describe('retryAfterMsFrom', () => {
  it('reads seconds, milliseconds and HTTP dates', () => {
    const now = Date.parse('2025-06-01T12:00:00Z');
    expect(retryAfterMsFrom(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryAfterMsFrom(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(retryAfterMsFrom(new Headers({ 'retry-after': 'Sun, 01 Jun 2025 12:00:30 GMT' }), now)).toBe(30_000);
    // A date in the past means "now", never a negative wait.
    expect(retryAfterMsFrom(new Headers({ 'retry-after': 'Sun, 01 Jun 2025 11:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMsFrom(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMsFrom(new Headers(), now)).toBeUndefined();
  });
});

describe('classifyError on plain errors', () => {
  it('passes ProviderErrors through and maps AbortError / TimeoutError / unknowns', () => {
    const original = new ProviderError('rate_limit', 'slow down', { retryAfterMs: 5 });
    expect(classifyError(original)).toBe(original);
    expect(classifyError(new DOMException('This operation was aborted', 'AbortError')).kind).toBe('aborted');
    expect(classifyError(new DOMException('The operation timed out', 'TimeoutError')).kind).toBe('timeout');
    expect(classifyError(new Error('something odd')).kind).toBe('unknown');
    expect(classifyError('a string').message).toBe('a string');
  });
});
