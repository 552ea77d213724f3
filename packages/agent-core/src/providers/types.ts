/**
 * The provider contract: one adapter per wire API, converting between the internal OpenAI-style messages
 * and the provider's format at the edge. The agent loop only ever sees these types.
 */
import type { ChatMessage, Usage } from '../base/types.js';

/** JSON Schema object describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/**
 * The prefix of a `provider:model` ref: one of the built-in providers (`openai`, `anthropic`, `openai-responses`,
 * `bedrock`) or the name of a configured OpenAI-compatible endpoint (`openrouter`, `vllm`, ...).
 */
export type ProviderName = string;
export type BuiltinProviderName = 'openai' | 'anthropic' | 'openai-responses' | 'bedrock';
export type ApiMode = 'chat_completions' | 'anthropic_messages' | 'responses' | 'bedrock_converse';
export const API_MODES: readonly ApiMode[] = ['chat_completions', 'anthropic_messages', 'responses', 'bedrock_converse'];

/** Normalised finish reasons (Anthropic end_turn→stop, tool_use→tool_calls, max_tokens→length). */
export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter';

export interface CompletionRequest {
  /** Built once per session and sent verbatim every call (prompt caching depends on it). */
  systemPrompt: string;
  /** Internal-format history, without a system message. */
  messages: ChatMessage[];
  tools: ToolSchema[];
  /** 'none': the tools are described (history may hold tool calls) but the model must answer in text. */
  toolChoice?: 'auto' | 'none';
  maxTokens?: number;
  /** Aborting closes the HTTP stream. */
  signal: AbortSignal;
  onTextDelta?: (text: string) => void;
  onReasoningDelta?: (text: string) => void;
  /**
   * Told as a tool call's name or arguments arrive: which call of the response (0, 1, …), its name so far and how many
   * characters of arguments have arrived (the preview and cut-off handling need no more).
   */
  onToolCallDelta?: (name: string, index: number, argsChars: number) => void;
  /**
   * Groups requests that share a prefix for the provider's prompt cache: one per chat (the gateway), the same
   * across its sessions, since a compression's next session reads what the last call wrote. Sent as OpenAI's
   * `prompt_cache_key` (Chat Completions and Responses), which routes by it; other APIs cache by prefix alone.
   */
  cacheKey?: string;
}

export interface CompletionResult {
  /** The assistant message: content, tool_calls, reasoning, finish_reason. */
  message: ChatMessage;
  finishReason: FinishReason;
  usage: Usage;
  /** The model that answered (as reported by the API when it says). */
  model: string;
  /**
   * The configured provider that answered, when the provider asked was a chain (fallback.ts `createFallbackProvider`) and another
   * of its models took the request: cost and usage are labelled and priced with this one. Absent: the one asked.
   */
  answeredBy?: { name: ProviderName; model: string };
}

export interface Provider {
  readonly name: ProviderName;
  readonly model: string;
  readonly apiMode: ApiMode;
  /** Whether images in user messages are sent to it (else only their text notes are); absent: they are sent. */
  readonly vision?: boolean;
  /** max_tokens it sends when a request names none (HERALD_MAX_TOKENS, or the API's required default); absent: none sent. */
  readonly maxTokens?: number;
  complete(req: CompletionRequest): Promise<CompletionResult>;
}

export type ProviderErrorKind =
  | 'rate_limit'
  | 'overloaded'
  | 'server_error'
  | 'timeout'
  | 'auth'
  | 'context_overflow'
  | 'payload_too_large'
  | 'model_not_found'
  | 'format_error'
  | 'aborted'
  | 'unknown';

/** Every provider failure reaches the loop as one of these, already classified. */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly status?: number;
  /** From Retry-After / retry-after-ms when the provider sent one. */
  readonly retryAfterMs?: number;
  /** Context limit named by a context-length error, when the body names one. */
  readonly contextLimit?: number;
  /**
   * The prompt's own size, when a context-length error says the prompt plus max_tokens is what overflowed
   * ("188240 + 21333 > 200000"): a smaller max_tokens fits without compressing anything.
   */
  readonly promptTokens?: number;
  /**
   * The connection failed, stalled or timed out (no HTTP answer to classify): the provider rebuilds its HTTP
   * client before the next attempt, so a retry does not reuse a pool of dead keep-alive sockets.
   */
  readonly transport: boolean;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    extra: { status?: number; retryAfterMs?: number; contextLimit?: number; promptTokens?: number; cause?: unknown; transport?: boolean } = {},
  ) {
    super(message, { cause: extra.cause });
    this.name = 'ProviderError';
    this.kind = kind;
    this.status = extra.status;
    this.retryAfterMs = extra.retryAfterMs;
    this.contextLimit = extra.contextLimit;
    this.promptTokens = extra.promptTokens;
    this.transport = extra.transport ?? false;
  }
}

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
export const REASONING_EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

/** `provider:model`, as in HERALD_MODEL and HERALD_FALLBACK_MODELS. */
export interface ModelRef {
  provider: ProviderName;
  model: string;
}

export interface ProviderConfig extends ModelRef {
  /** One key; `keyPool` instead when there are several. Bedrock ignores both (AWS credential chain). */
  apiKey?: string;
  /** Several keys with a rotation strategy and cooldowns shared across processes (key-pool.ts). */
  keyPool?: KeySource;
  baseUrl?: string;
  /** Explicit API mode; otherwise resolved from provider, then base-URL heuristics, then chat_completions. */
  apiMode?: ApiMode;
  /** Time to wait for response headers, in ms (the SDK's own timeout). */
  timeoutMs?: number;
  /** Takes images; from the model table (supportsVision) when absent. */
  vision?: boolean;
  /** max_tokens of every call that names none (HERALD_MAX_TOKENS per model); the API's default when absent. */
  maxTokens?: number;
  /** OpenAI reasoning models: `reasoning_effort` (Chat Completions) or `reasoning.effort` (Responses). */
  reasoningEffort?: ReasoningEffort;
  /** Anthropic extended thinking: `thinking.budget_tokens` (at least 1024); off when absent. */
  thinkingBudget?: number;
  /** A stream silent for this long is a stall: aborted and retried on a rebuilt client. Default 90 s. */
  stallTimeoutMs?: number;
  /** Told when a transport failure (stall, reset, timeout) made the provider rebuild a key's HTTP client. */
  onTransportReset?: (event: TransportReset) => void;
  /** AWS region for Bedrock; the AWS environment / config chain when absent. */
  region?: string;
  /**
   * Anthropic `cache_control` markers on a Chat Completions request (Claude reached through OpenRouter); by
   * default on when the model is a Claude and the base URL is not OpenAI's.
   */
  cacheMarkers?: boolean;
}

/** One API key handed out by a pool; only the fingerprint is ever logged or shown. */
export interface PooledKey {
  readonly key: string;
  /** `sk-…a1b2#3f9c01`: a short hash, safe for logs, health pages and Redis key names. */
  readonly fingerprint: string;
}

/** Where a provider gets its key for each request (key-pool.ts: KeyPool, or a single fixed key). */
export interface KeySource {
  /** Names the pool in logs and health output (`openai`, `openrouter`). */
  readonly label: string;
  readonly size: number;
  /** The key to use next, skipping `tried`; undefined when every key has been tried for this request. */
  acquire(tried: ReadonlySet<string>): Promise<PooledKey | undefined>;
  /** A request with this key failed in a way that says the key itself is spent or refused. */
  cool(key: PooledKey, err: ProviderError): Promise<void>;
}

export interface TransportReset {
  provider: string;
  model: string;
  /** The key whose client was rebuilt (fingerprint only). */
  fingerprint: string;
  error: string;
}
