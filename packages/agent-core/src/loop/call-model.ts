/**
 * One model call as the loop sees it: retries on the current provider, fallback along the provider chain, and
 * the context-overflow hook. Keeps the turn's usage and request count.
 */
import { emptyUsage, type ChatMessage, type Usage } from '../types.js';
import {
  ProviderError,
  type CompletionResult,
  type Provider,
  type ProviderErrorKind,
  type ToolSchema,
} from '../providers/types.js';
import { ProviderChain, providerLabel, type FallbackState } from './fallback.js';
import { isTransient, toProviderError, withRetries, type RetryPolicy } from './retry.js';
import type { Transcript } from './transcript.js';
import type { AgentEvent, ContextOverflowHandler } from './types.js';

/** Compressions tried for one call before the turn gives up on an oversized context. */
export const MAX_OVERFLOW_RECOVERIES = 3;

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
  /** The provider's prompt-cache key (the session id). */
  cacheKey?: string;
  onContextOverflow?: ContextOverflowHandler;
  emit: (event: AgentEvent) => void;
}

export class ModelCaller {
  readonly usage: Usage = emptyUsage();
  apiCalls = 0;
  lastPromptTokens?: number;
  private answeredBy?: string;
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
      const messages = transcript.forRequest();
      try {
        return await this.completeOnChain(messages, tools, toolChoice);
      } catch (err) {
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

  private async completeOnChain(messages: ChatMessage[], tools: ToolSchema[], toolChoice?: 'none'): Promise<CompletionResult> {
    const { signal, policy, fallbackState } = this.opts;
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
      }
    }
  }

  private async send(provider: Provider, messages: ChatMessage[], tools: ToolSchema[], toolChoice?: 'none'): Promise<CompletionResult> {
    const { emit, signal, systemPrompt, maxTokens, cacheKey } = this.opts;
    this.apiCalls += 1;
    const result = await provider.complete({
      systemPrompt,
      messages,
      tools,
      toolChoice,
      maxTokens,
      cacheKey,
      signal,
      onTextDelta: (text) => emit({ type: 'text_delta', text }),
      onReasoningDelta: (text) => emit({ type: 'reasoning_delta', text }),
    });
    addUsage(this.usage, result.usage);
    this.lastPromptTokens = result.usage.input + result.usage.cacheRead + result.usage.cacheWrite;
    this.answeredBy = result.model || provider.model;
    return result;
  }

  /** A turn that starts on a fallback says why, once. */
  private announceCooldowns(): void {
    if (this.announcedCooldowns) return;
    this.announcedCooldowns = true;
    for (const { provider, remainingMs } of this.chain.skippedAtStart) {
      this.status(
        'fallback',
        `${providerLabel(provider)} is cooling down after a rate limit (${formatSeconds(remainingMs)} left); ` +
          `using ${providerLabel(this.chain.current)}`,
      );
    }
  }

  private status(kind: 'retry' | 'fallback' | 'compression', message: string): void {
    this.opts.emit({ type: 'status', kind, message });
  }
}

function addUsage(total: Usage, add: Usage): void {
  total.input += add.input;
  total.output += add.output;
  total.cacheRead += add.cacheRead;
  total.cacheWrite += add.cacheWrite;
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
