import type { CacheUsage, PromptCacheOptions } from './prompt-cache.js';

/**
 * The contract of the LLM stand-ins. Other tests (the agent loop, the end-to-end suite) script these, so keep
 * the shape stable: add fields, never rename or remove them.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The parsed JSON body ({} when the body was empty or not JSON; see rawBody). */
  body: Record<string, unknown>;
  rawBody: string;
  /** True when the client closed the connection before the response was complete. */
  aborted: boolean;
  /** The client's TCP port: tells whether two requests shared a keep-alive connection. */
  remotePort?: number;
  startedAt: number;
  /** Set when the response finished or the connection closed. */
  endedAt?: number;
  /** What the provider's prompt cache made of the request, when the stand-in models it (FakeOptions.promptCache). */
  cache?: CacheUsage;
}

export type ErrorKind =
  | 'rate_limit'
  | 'server'
  | 'auth'
  | 'too_large'
  | 'context_length'
  | 'overloaded'
  | 'not_found'
  /** 402: the account is out of credit (OpenRouter's `Insufficient credits`). */
  | 'payment_required';

export interface StepError {
  status: number;
  /** Seconds, sent as the `retry-after` header. */
  retryAfter?: number;
  /** Picks the body; inferred from `status` when absent. */
  kind?: ErrorKind;
  /** Replaces the body's `error.message` (a proxy that quotes what it was sent, say). */
  message?: string;
}

export interface StepToolCall {
  id?: string;
  /** Send the call without an id (some OpenAI-compatible servers do); `id` is then ignored. */
  omitId?: boolean;
  name: string;
  /** JSON text, streamed in fragments exactly as given. */
  arguments: string;
}

export interface StepUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** OpenAI-compatible only: the call's cost in USD as OpenRouter reports it (`usage.cost`). */
  cost?: number;
}

export type StepFinish = 'stop' | 'tool_calls' | 'length';

export interface Step {
  /** Streamed in several deltas (split at word boundaries). */
  text?: string;
  reasoning?: string;
  toolCalls?: StepToolCall[];
  /** Default: tool_calls when toolCalls, else stop. */
  finish?: StepFinish;
  usage?: StepUsage;
  /** Wait before the first byte; a client that closes meanwhile is recorded as aborted. */
  delayMs?: number;
  /** Wait between deltas. */
  chunkDelayMs?: number;
  /** Send this many stream events, then nothing more while keeping the connection open (a stalled stream). */
  stallAfterEvents?: number;
  /** Send this many stream events, then destroy the connection (a reset mid-stream). */
  dropAfterEvents?: number;
  error?: StepError;
}

export type Responder = (req: RecordedRequest) => Step | Promise<Step>;

export interface FakeLLM {
  /** Base URL to give the SDK (OpenAI: ends with /v1; Anthropic: the root). */
  url: string;
  requests: RecordedRequest[];
  /** Queue scripted responses, consumed in order. */
  script(...steps: Step[]): void;
  /** Used when the script is empty. Default: echo `ok: <last user text>`. */
  respondWith(fn: Responder): void;
  /** Requests currently in flight (waiting or streaming). */
  activeRequests(): number;
  close(): Promise<void>;
  /** OpenAI only: the text-to-speech endpoint (speech.ts). */
  speech?: FakeSpeech;
}

/** The OpenAI stand-in's POST /v1/audio/speech (speech.ts). */
export interface FakeSpeech {
  /** Requests to /v1/audio/speech, in order. */
  requests(): RecordedRequest[];
  /** The next speech request fails with this status (and `retry-after`, when given). */
  failNext(error: StepError): void;
}

export interface FakeOptions {
  /** When set, any other key gets a 401; when unset, any non-empty key is accepted. */
  apiKey?: string;
  /**
   * Model the provider's prompt cache (prompt-cache.ts): usage then reports the cached and written tokens the real
   * API would, and each request records them in `cache`. Off by default: usage is the stand-in's rough estimate.
   */
  promptCache?: true | PromptCacheOptions;
}

export interface FakeOpenAIOptions extends FakeOptions {
  /** Field carrying reasoning deltas: DeepSeek/vLLM send `reasoning_content`, OpenRouter `reasoning`. */
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** Gemini's OpenAI endpoint: tool calls carry `extra_content.google.thought_signature`, required back (openai-compat.ts). */
  thoughtSignatures?: boolean;
  /** OpenRouter: reasoning also as signed `reasoning_details`, required back on tool-call turns (openai-compat.ts). */
  reasoningDetails?: boolean;
}

export interface FakeAnthropicOptions extends FakeOptions {
  /**
   * Refuse thinking blocks this stand-in did not sign (as the API refuses a signature from another key, model or
   * proxy) with the API's 400 `Invalid \`signature\` in \`thinking\` block`.
   */
  checkSignatures?: boolean;
}
