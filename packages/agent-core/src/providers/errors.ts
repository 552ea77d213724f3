/**
 * One place that turns whatever the OpenAI or Anthropic SDK (or the network under them) threw into a
 * classified ProviderError, so the loop decides retry / compress / fall back without string matching.
 */
import {
  APIConnectionError as AnthropicConnectionError,
  APIConnectionTimeoutError as AnthropicTimeoutError,
  APIError as AnthropicAPIError,
  APIUserAbortError as AnthropicAbortError,
} from '@anthropic-ai/sdk';
import {
  APIConnectionError as OpenAIConnectionError,
  APIConnectionTimeoutError as OpenAITimeoutError,
  APIError as OpenAIAPIError,
  APIUserAbortError as OpenAIAbortError,
} from 'openai';
import { isRecord, recordOr } from '../base/json-values.js';
import { awsFailureOf } from './aws-errors.js';
import { ProviderError } from './types.js';

/** Socket-level failures worth a retry: the server may be restarting or a proxy dropped us. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUT_ERROR_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Context-length messages as the APIs word them, each capturing the limit:
 * OpenAI / vLLM / OpenRouter "maximum context length is 128000 tokens",
 * Anthropic "prompt is too long: 208310 tokens > 200000 maximum" and
 * "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000".
 */
const CONTEXT_LIMIT_PATTERNS = [
  /maximum context length is ([\d,]+) tokens/i,
  /prompt is too long: [\d,]+ tokens > ([\d,]+) maximum/i,
  /exceed context limit: [\d,]+ \+ [\d,]+ > ([\d,]+)/i,
];
/**
 * Wordings that split the overflow into prompt and output, capturing the prompt's size: Anthropic
 * "exceed context limit: 188240 + 21333 > 200000", OpenAI / vLLM "(5000 in the messages, 4000 in the completion)"
 * and vLLM "your request has 5000 input tokens (4000 > 8192 - 5000)".
 */
const PROMPT_SIZE_PATTERNS = [
  /exceed context limit: ([\d,]+) \+ [\d,]+ > [\d,]+/i,
  /\(([\d,]+) in the messages, [\d,]+ in the completion\)/i,
  /your request has ([\d,]+) input tokens \([\d,]+ > [\d,]+ - [\d,]+\)/i,
];
/** Context-length wordings that do not name a limit. */
const CONTEXT_OVERFLOW_HINT = /context[ _-]?(length|window|size)|prompt is too long|too many tokens|input is too long/i;
/** OpenAI's rate-limit bodies say "Please try again in 20s" / "in 820ms" when no header does. */
const TRY_AGAIN_IN = /try again in (\d+(?:\.\d+)?)(ms|s)\b/i;

export interface ApiFailure {
  status?: number;
  type?: string;
  code?: string;
  message: string;
  headers?: { get(name: string): string | null };
  /** The error object inside the body (`body.error`), for server-specific fields such as llama.cpp's n_ctx. */
  inner: Record<string, unknown>;
}

export function classifyError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const message = messageOf(err);
  if (isAbortError(err)) return new ProviderError('aborted', 'request aborted', { cause: err });
  if (isTimeoutError(err)) return new ProviderError('timeout', `request timed out: ${message}`, { cause: err, transport: true });
  if (err instanceof OpenAIConnectionError || err instanceof AnthropicConnectionError || isNetworkError(err)) {
    return new ProviderError('server_error', `connection failed: ${causeMessage(err)}`, { cause: err, transport: true });
  }
  const failure = apiFailureOf(err) ?? awsFailureOf(err);
  if (failure) return classifyApiFailure(failure, err);
  return new ProviderError('unknown', message, { cause: err });
}

function classifyApiFailure(f: ApiFailure, cause: unknown): ProviderError {
  const { status, type, code, message } = f;
  const retryAfterMs = retryAfterMsFrom(f.headers) ?? retryHintFrom(message);
  const extra = { status, cause };

  if (status === 413 || type === 'request_too_large') return new ProviderError('payload_too_large', message, extra);
  if (status !== 429 && (status === undefined || status < 500)) {
    const overflow = contextOverflowOf(f);
    if (overflow) return new ProviderError('context_overflow', message, { ...extra, contextLimit: overflow.limit, promptTokens: promptSizeOf(message) });
  }
  if (status === 429 || type === 'rate_limit_error') {
    // An exhausted quota or spend limit is a 429 too, but waiting does not fix it.
    if (code === 'insufficient_quota') return new ProviderError('auth', message, extra);
    return new ProviderError('rate_limit', message, { ...extra, retryAfterMs });
  }
  if (status === 529 || type === 'overloaded_error' || (status === 503 && /overloaded/i.test(message))) {
    return new ProviderError('overloaded', message, { ...extra, retryAfterMs });
  }
  if (status === 401 || status === 402 || status === 403) return new ProviderError('auth', message, extra);
  if (type === 'authentication_error' || type === 'permission_error' || type === 'billing_error') {
    return new ProviderError('auth', message, extra);
  }
  if (status === 404 || code === 'model_not_found' || type === 'not_found_error') {
    return new ProviderError('model_not_found', message, extra);
  }
  if (status === 408 || type === 'timeout_error') return new ProviderError('timeout', message, extra);
  if ((status !== undefined && status >= 500) || type === 'api_error' || type === 'server_error') {
    return new ProviderError('server_error', message, { ...extra, retryAfterMs });
  }
  if (status === 400 || status === 422 || type === 'invalid_request_error') {
    return new ProviderError('format_error', message, extra);
  }
  return new ProviderError('unknown', message, extra);
}

function promptSizeOf(message: string): number | undefined {
  for (const re of PROMPT_SIZE_PATTERNS) {
    const m = re.exec(message);
    if (m?.[1]) return Number(m[1].replaceAll(',', ''));
  }
  return undefined;
}

function contextOverflowOf(f: ApiFailure): { limit?: number } | undefined {
  for (const re of CONTEXT_LIMIT_PATTERNS) {
    const m = re.exec(f.message);
    if (m?.[1]) return { limit: Number(m[1].replaceAll(',', '')) };
  }
  // llama.cpp names the window in a field of its own.
  if (f.type === 'exceed_context_size_error') {
    return { limit: typeof f.inner.n_ctx === 'number' ? f.inner.n_ctx : undefined };
  }
  if (f.code === 'context_length_exceeded' || CONTEXT_OVERFLOW_HINT.test(f.message)) return {};
  return undefined;
}

/**
 * Milliseconds to wait from `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date).
 * Exported for the fallback logic, which may see headers of its own.
 */
export function retryAfterMsFrom(headers: ApiFailure['headers'], now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number.parseFloat(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function retryHintFrom(message: string): number | undefined {
  const m = TRY_AGAIN_IN.exec(message);
  if (!m?.[1]) return undefined;
  const n = Number.parseFloat(m[1]);
  return Math.round(m[2]?.toLowerCase() === 'ms' ? n : n * 1000);
}

/**
 * Status, type, code and message of an SDK APIError. OpenAI keeps the inner `{message,type,param,code}` in
 * `.error`; Anthropic keeps the whole `{type:'error', error:{type,message}}` body there. Errors sent inside a
 * stream arrive with no status but the same body.
 */
function apiFailureOf(err: unknown): ApiFailure | undefined {
  if (!(err instanceof OpenAIAPIError) && !(err instanceof AnthropicAPIError)) return undefined;
  const body: unknown = err.error;
  const inner = isRecord(body) && isRecord(body.error) ? body.error : recordOr(body);
  const status = typeof err.status === 'number' ? err.status : undefined;
  const type = typeof inner.type === 'string' ? inner.type : undefined;
  const code = typeof inner.code === 'string' ? inner.code : undefined;
  const headers = err.headers ?? undefined;
  const apiMessage = typeof inner.message === 'string' ? inner.message : undefined;
  const message = apiMessage === undefined ? err.message : status === undefined ? apiMessage : `${status} ${apiMessage}`;
  if (status === undefined && type === undefined && code === undefined) return undefined;
  return { status, type, code, message, headers, inner };
}

function isAbortError(err: unknown): boolean {
  if (err instanceof OpenAIAbortError || err instanceof AnthropicAbortError) return true;
  return isRecord(err) && err.name === 'AbortError';
}

function isTimeoutError(err: unknown): boolean {
  if (err instanceof OpenAITimeoutError || err instanceof AnthropicTimeoutError) return true;
  if (!isRecord(err)) return false;
  return err.name === 'TimeoutError' || TIMEOUT_ERROR_CODES.has(String(err.code)) || (isRecord(err.cause) && isTimeoutError(err.cause));
}

/** undici reports a dropped stream as `TypeError: terminated` with the socket error as its cause. */
function isNetworkError(err: unknown): boolean {
  if (!isRecord(err)) return false;
  if (NETWORK_ERROR_CODES.has(String(err.code))) return true;
  if (err instanceof TypeError && (err.message === 'terminated' || err.message === 'fetch failed')) return true;
  return isRecord(err.cause) && isNetworkError(err.cause);
}

function causeMessage(err: unknown): string {
  const cause = isRecord(err) ? err.cause : undefined;
  return cause === undefined ? messageOf(err) : `${messageOf(err)} (${messageOf(cause)})`;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err));
}
