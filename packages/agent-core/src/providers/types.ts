/**
 * The provider contract: one adapter per wire API, converting between the internal OpenAI-style messages
 * and the provider's format at the edge. The agent loop only ever sees these types.
 */
import type { ChatMessage, Usage } from '../types.js';

/** JSON Schema object describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export type ProviderName = 'openai' | 'anthropic';
export type ApiMode = 'chat_completions' | 'anthropic_messages';

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
}

export interface CompletionResult {
  /** The assistant message: content, tool_calls, reasoning, finish_reason. */
  message: ChatMessage;
  finishReason: FinishReason;
  usage: Usage;
  /** The model that answered (as reported by the API when it says). */
  model: string;
}

export interface Provider {
  readonly name: ProviderName;
  readonly model: string;
  readonly apiMode: ApiMode;
  /** Whether images in user messages are sent to it (else only their text notes are); absent: they are sent. */
  readonly vision?: boolean;
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

  constructor(
    kind: ProviderErrorKind,
    message: string,
    extra: { status?: number; retryAfterMs?: number; contextLimit?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: extra.cause });
    this.name = 'ProviderError';
    this.kind = kind;
    this.status = extra.status;
    this.retryAfterMs = extra.retryAfterMs;
    this.contextLimit = extra.contextLimit;
  }
}

/** `provider:model`, as in HERALD_MODEL and HERALD_FALLBACK_MODELS. */
export interface ModelRef {
  provider: ProviderName;
  model: string;
}

export interface ProviderConfig extends ModelRef {
  apiKey: string;
  baseUrl?: string;
  /** Explicit API mode; otherwise resolved from provider, then base-URL heuristics, then chat_completions. */
  apiMode?: ApiMode;
  /** Per-request timeout in ms. */
  timeoutMs?: number;
  /** Takes images; from the model table (supportsVision) when absent. */
  vision?: boolean;
}
