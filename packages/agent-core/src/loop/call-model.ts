/**
 * One model call as the loop sees it: retries on the current provider (`withRetries`, the one retry owner for
 * model calls; its policy and waits in providers/retry.ts), fallback along the provider chain, and the
 * context-overflow hook. Keeps the turn's usage and request count.
 */
import { addUsageInto, emptyUsage, type ChatMessage, type Usage } from '../base/types.js';
import { ProviderError, type CompletionResult, type Provider, type ProviderErrorKind, type ToolSchema } from '../providers/types.js';
import { modelInfo } from '../providers/models.js';
import { ProviderChain, providerLabel, type FallbackState } from '../providers/fallback.js';
import { abortableSleep, backoffDelay, isTransient, toProviderError, type RetryPolicy } from '../providers/retry.js';
import type { Transcript } from './transcript.js';
import type { AgentEvent, ContextOverflowHandler } from './types.js';

/** Compressions tried for one call before the turn gives up on an oversized context. */
const MAX_OVERFLOW_RECOVERIES = 3;
/** An output limit lowered to fit the window must still leave this much room for an answer; else compress. */
const MIN_OUTPUT_TOKENS = 1024;

/** Another provider would fail the same way (the request is too big), or the user asked us to stop. */
const NEVER_FALL_BACK: ReadonlySet<ProviderErrorKind> = new Set(['context_overflow', 'payload_too_large', 'aborted']);
const OVERFLOW_KINDS: ReadonlySet<ProviderErrorKind> = new Set(['context_overflow', 'payload_too_large']);

export interface ModelCallerOptions {
  providers: readonly Provider[];
  fallbackState: FallbackState;
  policy: RetryPolicy;
  signal: AbortSignal;
  systemPrompt: string;
  maxTokens?: number;
  /** The provider's prompt-cache key (one per chat: the same across its sessions). */
  cacheKey?: string;
  onContextOverflow?: ContextOverflowHandler;
  /**
   * The turn fell back to another model mid-call, whose prompt cache holds nothing of this session: a compressed
   * context to send it instead, or null to send the request as it is (the loop compressor's onColdCache).
   */
  onColdCache?: (messages: ChatMessage[], tools: readonly ToolSchema[]) => Promise<ChatMessage[] | null>;
  emit: (event: AgentEvent) => void;
}

export class ModelCaller {
  readonly usage: Usage = emptyUsage();
  apiCalls = 0;
  lastPromptTokens?: number;
  private answeredBy?: string;
  /** max_tokens for the rest of the turn, once lowered to fit the window or raised for a cut-off tool call. */
  private outputLimit?: number;
  private announcedCooldowns = false;
  private readonly chain: ProviderChain;

  constructor(private readonly opts: ModelCallerOptions) {
    this.chain = new ProviderChain(opts.providers, opts.fallbackState);
  }

  /** The provider the turn is on now (after any fallback). */
  get provider(): Provider {
    return this.chain.current;
  }

  /** The model that answered last, else the one the turn is on. */
  get model(): string {
    return this.answeredBy ?? this.chain.current.model;
  }

  /** Sends the transcript; on an oversized context, lets the overflow hook shrink it and sends again. */
  async complete(transcript: Transcript, tools: ToolSchema[], toolChoice?: 'none'): Promise<CompletionResult> {
    this.announceCooldowns();
    for (let recoveries = 0; ; recoveries++) {
      try {
        return await this.completeOnChain(transcript, tools, toolChoice);
      } catch (err) {
        // What was sent last (compacted when the chain moved to a cold model).
        const messages = transcript.forRequest();
        if (this.lowerOutputLimit(err)) continue;
        const handler = this.opts.onContextOverflow;
        const overflow = err instanceof ProviderError && OVERFLOW_KINDS.has(err.kind);
        if (!overflow || !handler || recoveries >= MAX_OVERFLOW_RECOVERIES || this.opts.signal.aborted) throw err;
        this.status('compression', `context too large (${err.kind}); compressing and retrying`);
        const compressed = await handler(messages, err);
        if (compressed === null) throw err;
        transcript.replaceContext(compressed);
      }
    }
  }

  /**
   * The model on the turn answered with nothing: the rest of the turn goes to the next model of the chain at once
   * (the seeds' eager fallback), rather than asking the same model again. False when there is no next model.
   */
  fallBackAfterEmptyReply(): boolean {
    const from = this.chain.current;
    const next = this.chain.advance();
    if (!next) return false;
    this.status('fallback', `${providerLabel(from)} gave an empty reply; using ${providerLabel(next)}`);
    return true;
  }

  /** The max_tokens the next call sends (undefined: none, the API's default). */
  get maxTokens(): number | undefined {
    return this.outputLimit ?? this.opts.maxTokens ?? this.chain.current.maxTokens;
  }

  /**
   * More room for a reply the output limit cut off (a tool call half written): twice the current limit, up to the
   * model's own cap. False when it cannot grow (already at the cap, or neither limit is known).
   */
  raiseOutputLimit(): boolean {
    const cap = modelInfo(this.chain.current.model)?.maxOutput;
    const current = this.maxTokens;
    const target = current === undefined ? cap : Math.min(current * 2, cap ?? current * 2);
    if (target === undefined || (current !== undefined && target <= current)) return false;
    this.outputLimit = target;
    this.status('retry', `reply cut off by the output limit; asking again with max_tokens ${target}`);
    return true;
  }

  /**
   * "input + max_tokens > limit": the prompt fits, only the asked-for output does not. A max_tokens lowered to
   * the room left (when that is still a useful answer size) fixes it without compressing anything.
   */
  private lowerOutputLimit(err: unknown): boolean {
    if (!(err instanceof ProviderError) || err.kind !== 'context_overflow') return false;
    const { contextLimit, promptTokens } = err;
    if (contextLimit === undefined || promptTokens === undefined || this.opts.signal.aborted) return false;
    const room = contextLimit - promptTokens;
    const current = this.maxTokens;
    if (room < MIN_OUTPUT_TOKENS || (current !== undefined && room >= current)) return false;
    this.outputLimit = room;
    this.status('retry', `prompt ${promptTokens} + max_tokens ${current ?? '?'} > ${contextLimit} tokens; asking again with max_tokens ${room}`);
    return true;
  }

  private async completeOnChain(transcript: Transcript, tools: ToolSchema[], toolChoice?: 'none'): Promise<CompletionResult> {
    const { signal, policy, fallbackState } = this.opts;
    let messages = transcript.forRequest();
    for (;;) {
      const provider = this.chain.current;
      try {
        const result = await withRetries(() => this.send(provider, messages, tools, toolChoice), policy, {
          signal,
          // A 429 moves to the next provider at once; the last provider waits it out like any transient error.
          shouldRetry: (err) => isTransient(err) && !(err.kind === 'rate_limit' && this.chain.hasNext),
          onRetry: (err, retry, delayMs) => {
            const when = `retry ${retry}/${policy.maxRetries} in ${formatSeconds(delayMs)}`;
            this.status('retry', `${providerLabel(provider)}: ${err.kind}; ${when}`);
          },
        });
        fallbackState.recordSuccess(provider);
        return result;
      } catch (raw) {
        const err = toProviderError(raw);
        if (err.kind === 'rate_limit') fallbackState.recordRateLimit(provider, err.retryAfterMs);
        if (signal.aborted || NEVER_FALL_BACK.has(err.kind)) throw err;
        const next = this.chain.advance();
        if (!next) throw err;
        this.status('fallback', `${providerLabel(provider)} failed (${err.kind}); using ${providerLabel(next)}`);
        messages = await this.compactForColdCache(transcript, messages, tools);
      }
    }
  }

  /**
   * The next model starts with a cold prompt cache: it writes the whole request anyway, so a compression that is
   * nearly due costs nothing now, where a turn later it would throw a warm prefix away and write its own cold.
   */
  private async compactForColdCache(transcript: Transcript, messages: ChatMessage[], tools: readonly ToolSchema[]): Promise<ChatMessage[]> {
    const hook = this.opts.onColdCache;
    if (!hook || this.opts.signal.aborted) return messages;
    const compacted = await hook(messages, tools);
    if (compacted === null) return messages;
    transcript.replaceContext(compacted);
    return transcript.forRequest();
  }

  private async send(provider: Provider, messages: ChatMessage[], tools: ToolSchema[], toolChoice?: 'none'): Promise<CompletionResult> {
    const { emit, signal, systemPrompt, cacheKey } = this.opts;
    this.apiCalls += 1;
    let streamed = '';
    let calledTools = false;
    try {
      const result = await provider.complete({
        systemPrompt,
        messages,
        tools,
        toolChoice,
        maxTokens: this.outputLimit ?? this.opts.maxTokens ?? provider.maxTokens,
        cacheKey,
        signal,
        onTextDelta: (text) => {
          streamed += text;
          emit({ type: 'text_delta', text });
        },
        onReasoningDelta: (text) => emit({ type: 'reasoning_delta', text }),
        onToolCallDelta: (name, index, argsChars) => {
          calledTools = true;
          emit({ type: 'tool_call_delta', index, name, argsChars });
        },
      });
      addUsageInto(this.usage, result.usage);
      this.lastPromptTokens = result.usage.input + result.usage.cacheRead + result.usage.cacheWrite;
      this.answeredBy = result.model || provider.model;
      return result;
    } catch (raw) {
      const err = toProviderError(raw);
      // The connection dropped after text the user may already see: rather than asking the same question blind
      // (and showing a different answer), the text so far counts as a reply cut off by its length, which the loop
      // asks the model to continue.
      if (streamed.trim() === '' || calledTools || signal.aborted || !isTransient(err)) throw err;
      this.opts.emit({
        type: 'status',
        kind: 'info',
        message: `${providerLabel(provider)}: ${err.kind} after ${streamed.length} characters; continuing from there`,
      });
      this.answeredBy = provider.model;
      const message: ChatMessage = { role: 'assistant', content: streamed, finish_reason: 'length' };
      return { message, finishReason: 'length', usage: emptyUsage(), model: provider.model };
    }
  }

  /** A turn that starts on a fallback says why, once. */
  private announceCooldowns(): void {
    if (this.announcedCooldowns) return;
    this.announcedCooldowns = true;
    for (const { provider, remainingMs } of this.chain.skippedAtStart) {
      this.status(
        'fallback',
        `${providerLabel(provider)} is cooling down after a rate limit (${formatSeconds(remainingMs)} left); ` + `using ${providerLabel(this.chain.current)}`,
      );
    }
  }

  private status(kind: 'retry' | 'fallback' | 'compression', message: string): void {
    this.opts.emit({ type: 'status', kind, message });
  }
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

export interface RetryHooks {
  signal: AbortSignal;
  /** Whether this failure is worth another attempt on the same provider. */
  shouldRetry: (err: ProviderError) => boolean;
  onRetry?: (err: ProviderError, retry: number, delayMs: number) => void;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or retries run out; then throws the last
 * ProviderError. The wait is the server's Retry-After when given (up to `maxRetryAfterMs`), else the backoff.
 */
export async function withRetries<T>(attempt: () => Promise<T>, policy: RetryPolicy, hooks: RetryHooks): Promise<T> {
  for (let retry = 1; ; retry++) {
    try {
      return await attempt();
    } catch (raw) {
      const err = toProviderError(raw);
      if (hooks.signal.aborted || retry > policy.maxRetries || !hooks.shouldRetry(err)) throw err;
      if (err.retryAfterMs !== undefined && err.retryAfterMs > policy.maxRetryAfterMs) throw err;
      const delayMs = err.retryAfterMs ?? backoffDelay(retry, policy);
      hooks.onRetry?.(err, retry, delayMs);
      await abortableSleep(delayMs, hooks.signal);
    }
  }
}
