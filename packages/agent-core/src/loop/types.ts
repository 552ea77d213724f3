/**
 * The agent loop's public shapes: what `runConversation` takes, what it returns, and the one event stream the
 * gateway renders from.
 */
import type { AttachmentRef, ChatMessage, ImageInput, Usage } from '../base/types.js';
import type { Provider, ProviderError, ProviderErrorKind } from '../providers/types.js';
import type { Tool } from '../tools/registry.js';
import type { ToolHook } from './tool-hooks.js';
import type { CompressionOptions } from '../compression/options.js';
import type { IterationBudget } from './budget.js';
import type { FallbackState } from '../providers/fallback.js';
import type { RetryPolicy } from '../providers/retry.js';

export type StatusKind = 'retry' | 'fallback' | 'compression' | 'info';

/**
 * The loop's one event stream. Text deltas stream as they arrive; after a `status` of kind retry or fallback,
 * the text streamed since the last completed call belonged to an attempt that was thrown away. Deltas of a
 * response re-asked for invalid tool arguments are discarded the same way; the result is what counts.
 */
export type AgentEvent =
  | { type: 'turn_start'; model: string; userMessage: string }
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  /** One iteration of the loop begins (a model call); `remaining` counts iterations left after it. */
  | { type: 'step'; iteration: number; remaining: number }
  /** Text the model wrote before the tool calls of a response (it stays in the history): "Let me look that up." */
  | { type: 'interim_text'; text: string }
  /**
   * A tool call's name or arguments are streaming in (Hermes' tool preview): raised as the model writes the call,
   * before it is complete and before `tool_start`. `argsChars` counts the arguments written so far.
   */
  | { type: 'tool_call_delta'; index: number; name: string; argsChars: number }
  | { type: 'tool_start'; id: string; name: string; args: Record<string, unknown> }
  | { type: 'tool_end'; id: string; name: string; ok: boolean; durationMs: number; preview: string }
  | { type: 'status'; kind: StatusKind; message: string }
  | { type: 'turn_end'; result: ConversationResult };

/**
 * Called when the provider says the request is too big (context_overflow / payload_too_large) with the
 * messages that were sent. Return a shorter list to retry with, or null to give up (the turn then ends as
 * partial with the error kind). Tried at most MAX_OVERFLOW_RECOVERIES times per call.
 */
export type ContextOverflowHandler = (messages: ChatMessage[], err: ProviderError) => Promise<ChatMessage[] | null>;

export interface ConversationOptions {
  userMessage: string;
  /** Files the user sent with the message: stored with it (references, never bytes). */
  userAttachments?: AttachmentRef[];
  /** Images shown to the model with the message on this turn's calls; never stored. */
  userImages?: ImageInput[];
  /** Earlier messages of the session, without a system message. */
  history: ChatMessage[];
  /** Sent verbatim on every call of the turn (prompt caching depends on it). */
  systemPrompt: string;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  provider: Provider;
  /** Tried in order when the current provider is rate limited, refuses the key or model, or keeps failing. */
  fallbacks?: Provider[];
  /** Cooldowns of rate-limited providers; keep one per process so later turns skip a provider that got a 429. */
  fallbackState?: FallbackState;
  tools?: Tool[];
  /**
   * Run around every tool call, in this order (tool-hooks.ts): a before-hook may allow, deny with a result text, or
   * pause the call; an after-hook sees the result. Subagents started by delegate_task get the same list.
   */
  toolHooks?: readonly ToolHook[];
  /** Default 90 (HERALD_MAX_ITERATIONS). Ignored when `budget` is given. */
  maxIterations?: number;
  /** Shared with subagents so the whole tree of work stays within one budget. */
  budget?: IterationBudget;
  /** Called after each tool batch; returned texts become one user message so a user can steer a running turn. */
  getSteerMessages?: () => string[];
  /** Extra fields passed to every tool next to the signal (session id, store, ...). */
  toolContext?: Record<string, unknown>;
  /** The run's task id, given to every tool as `taskId` (over any in `toolContext`); a new one when absent. */
  taskId?: string;
  /**
   * Text put after the latest user message's own text in every request of this run, and never stored (not in
   * `newMessages`, not in what compression summarises): the saved notes, read once for the turn (B7). The system
   * prompt and the history before the turn's message stay byte-identical from call to call, so prompt caches hit.
   */
  requestContext?: string;
  /**
   * Appended to the system prompt of every request of this run and never stored (Hermes' ephemeral system prompt,
   * N2): the session keeps `systemPrompt` only. Constant for a deployment, so the cached prefix stays stable.
   */
  ephemeralSystemPrompt?: string;
  onContextOverflow?: ContextOverflowHandler;
  /** Retry timing; tests shrink the base delay. */
  retry?: Partial<RetryPolicy>;
  /** max_tokens per call; the provider's default when absent. */
  maxTokens?: number;
  /** Prompt-cache key sent with every call (OpenAI `prompt_cache_key`): one per chat, the same across its sessions. */
  cacheKey?: string;
  /**
   * Saves the turn's messages so far after each tool batch (from the user message on; same positions every time),
   * so a crash mid-turn does not repeat finished tool work: the re-run passes them back as `resume`. Skipped once
   * compression replaced the context (the caller persists the compacted history at the end). A failure is
   * reported as a status and never ends the turn.
   */
  onCheckpoint?: (turnMessages: ChatMessage[]) => Promise<void>;
  /**
   * The messages of this same turn that an earlier, crashed run saved (starting with its user message): the turn
   * continues after them instead of starting over; `userMessage` and the user's media are then not used.
   */
  resume?: ChatMessage[];
  /**
   * Compress the context inside the turn: before the first call when the request reaches the threshold (default
   * 50 % of the window), after tool batches on real usage, and on context-length / 413 errors (unless
   * `onContextOverflow` is given). Off when absent.
   */
  compression?: CompressionOptions;
}

export interface ConversationResult {
  finalResponse: string;
  /** Everything to persist, starting with the user message. */
  newMessages: ChatMessage[];
  usage: Usage;
  /** Requests sent to providers, retries and fallbacks included. */
  apiCalls: number;
  completed: boolean;
  interrupted: boolean;
  /** Why the turn ended early, when it did: 'thinking budget exhausted', 'iteration budget exhausted', ... */
  partial?: string;
  /** The provider error that ended the turn, when one did. */
  error?: { kind: ProviderErrorKind; message: string };
  /** The model of the last provider that answered (or was tried). */
  model: string;
  /** The task id the run's tools were given (always set by runConversation). */
  taskId?: string;
  /** Prompt size of the last successful call (input + cache read + cache write), for compression decisions. */
  lastPromptTokens?: number;
  /**
   * Set only when compression (or `onContextOverflow`) replaced the context during the turn: the compressed history,
   * followed by this turn's messages. The caller persists it instead of appending `newMessages`.
   */
  compactedHistory?: ChatMessage[];
}
