/**
 * Compression inside one turn of the agent loop, on four triggers:
 *   - preflight: before the first call, when the estimated request (tool schemas included) reaches the threshold
 *     (default 50 % of the window), up to 3 passes;
 *   - after a tool batch: when the last API-reported prompt size plus what the batch added reaches it;
 *   - on a context-length error or a 413 (through the loop's onContextOverflow hook): the named limit is learnt
 *     for the model; with no limit named, the assumed window steps down 128K → 64K → 32K → 16K → 8K, skipping
 *     steps that are not below the size of the refused request (they cannot be the limit);
 *   - on a fallback mid-call (the model caller's onColdCache hook): the next model's prompt cache is cold, so a
 *     request past 85 % of the threshold is compressed before it is sent (COLD_CACHE_SHARE).
 * Each compression is announced as a `status` event of kind `compression`, and preceded by the options'
 * `beforeCompress` hook (the gateway's memory-only flush) — only when there is a middle to summarise: a trigger
 * that finds nothing to compress (a short history past the threshold) costs no flush call.
 */
import { addUsageInto, type ChatMessage, type Usage } from '../base/types.js';
import type { Provider, ProviderError, ToolSchema } from '../providers/types.js';
import type { Transcript } from '../loop/transcript.js';
import type { AgentEvent } from '../loop/types.js';
import { compressHistory, type CompressionResult } from './compressor.js';
import type { CompressionOptions } from './options.js';
import { estimateMessagesTokens, estimateRequestTokens, imageTokensFor } from './tokens.js';
import { DEFAULT_THRESHOLD_RATIO, processContextWindows, stepDownWindow, thresholdFor, type ContextWindows } from './windows.js';

export const MAX_PREFLIGHT_PASSES = 3;
/** Of the threshold: a request this close to it is compressed when the next call's prompt cache is cold anyway. */
const COLD_CACHE_SHARE = 0.85;

/** The loop's model caller as the compressor sees it: the provider in use, and the turn's totals to add to. */
interface CallerView {
  readonly provider: Provider;
  readonly usage: Usage;
  apiCalls: number;
}

export interface LoopCompressorDeps {
  options: CompressionOptions;
  /**
   * Read lazily: the compressor is built before the caller, whose overflow hook it provides. The caller's current
   * provider (it may have fallen back) writes the summary, and the summary call counts in the turn's usage.
   */
  caller: () => CallerView;
  systemPrompt: string;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
}

export class LoopCompressor {
  /** Set by overflow errors that named no limit; lowers the window for the rest of the turn. */
  private assumedWindow?: number;

  constructor(private readonly deps: LoopCompressorDeps) {}

  /** Limits providers named, shared by every worker when the caller passes the store-backed ones. */
  private get windows(): ContextWindows {
    return this.deps.options.windows ?? processContextWindows;
  }

  get window(): number {
    const known = this.windows.effective(this.deps.caller().provider, this.deps.options.contextWindow);
    return this.assumedWindow === undefined ? known : Math.min(known, this.assumedWindow);
  }

  /** The per-image estimate of the provider in use. */
  private get imageTokens(): number {
    return imageTokensFor(this.deps.caller().provider.apiMode);
  }

  get threshold(): number {
    return thresholdFor(this.window, this.deps.options.thresholdRatio ?? DEFAULT_THRESHOLD_RATIO);
  }

  /** Before the first call: compress while the estimated request is over the threshold and it still helps. */
  async preflight(transcript: Transcript, tools: readonly ToolSchema[]): Promise<void> {
    const passes = this.deps.options.maxPreflightPasses ?? MAX_PREFLIGHT_PASSES;
    for (let pass = 0; pass < passes; pass++) {
      const messages = transcript.forRequest();
      if (estimateRequestTokens(this.deps.systemPrompt, messages, tools, this.imageTokens) < this.threshold) return;
      const result = await this.compress(messages, 'preflight', pass === 0);
      if (!madeProgress(result)) return;
      transcript.replaceContext(result.messages);
    }
  }

  /**
   * After a tool batch: the last call's real prompt size plus an estimate of what the batch added (the reply and
   * the results); the whole request is estimated when the provider reported no usage.
   */
  async afterToolBatch(
    transcript: Transcript,
    tools: readonly ToolSchema[],
    lastPromptTokens: number | undefined,
    added: readonly ChatMessage[],
  ): Promise<void> {
    const messages = transcript.forRequest();
    const tokens =
      lastPromptTokens !== undefined && lastPromptTokens > 0
        ? lastPromptTokens + estimateMessagesTokens(added, this.imageTokens)
        : estimateRequestTokens(this.deps.systemPrompt, messages, tools, this.imageTokens);
    if (tokens < this.threshold) return;
    const result = await this.compress(messages, 'after tool results', true);
    if (madeProgress(result)) transcript.replaceContext(result.messages);
  }

  /**
   * A reply cut by the output limit whose request was already near the window: asking for the rest would push past
   * it, so the history is compressed first (the cut-off parts are scaffold and stay out of it). The size is the cut
   * call's reported prompt plus its output (the request estimated when no usage came). True when the context was replaced.
   */
  async beforeContinuation(transcript: Transcript, tools: readonly ToolSchema[], lastPromptTokens: number | undefined, outputTokens: number): Promise<boolean> {
    const prompt =
      lastPromptTokens !== undefined && lastPromptTokens > 0
        ? lastPromptTokens
        : estimateRequestTokens(this.deps.systemPrompt, transcript.forRequest(), tools, this.imageTokens);
    if (prompt + outputTokens < this.threshold) return false;
    const result = await this.compress(transcript.forCompression(), 'reply cut off near the context window', true);
    if (!madeProgress(result)) return false;
    transcript.replaceContext(result.messages);
    return true;
  }

  /**
   * The model caller's onColdCache hook: the turn fell back to a model whose prompt cache holds nothing of this
   * session. Past COLD_CACHE_SHARE of the threshold, the compression that is due within a turn or two happens now,
   * while it costs no cached prefix; below it, or when it would gain nothing, null (send as it is).
   */
  readonly onColdCache = async (messages: ChatMessage[], tools: readonly ToolSchema[]): Promise<ChatMessage[] | null> => {
    const share = this.deps.options.coldCacheShare ?? COLD_CACHE_SHARE;
    if (share <= 0 || share > 1) return null;
    if (estimateRequestTokens(this.deps.systemPrompt, messages, tools, this.imageTokens) < this.threshold * share) return null;
    const result = await this.compress(messages, 'the fallback model starts with a cold prompt cache', true);
    return madeProgress(result) ? result.messages : null;
  };

  /** The loop's onContextOverflow hook: learn or assume a smaller window, compress, or give up (null). */
  readonly onContextOverflow = async (messages: ChatMessage[], err: ProviderError): Promise<ChatMessage[] | null> => {
    if (err.contextLimit !== undefined) await this.windows.learn(this.deps.caller().provider, err.contextLimit);
    else this.assumedWindow = this.stepDownBelow(estimateRequestTokens(this.deps.systemPrompt, messages, [], this.imageTokens));
    const result = await this.compress(messages, 'context too large', true);
    if (madeProgress(result)) return result.messages;
    this.status('nothing left to compress: the recent messages alone are too large for the model');
    return null;
  };

  /** The next assumed window, skipping steps at or above the size of the request that was just refused. */
  private stepDownBelow(requestTokens: number): number {
    let window = stepDownWindow(this.window);
    while (window >= requestTokens && stepDownWindow(window) < window) window = stepDownWindow(window);
    return window;
  }

  private async compress(messages: ChatMessage[], why: string, flushFirst: boolean): Promise<CompressionResult> {
    const flush = flushFirst ? this.deps.options.beforeCompress : undefined;
    const window = this.window;
    const result = await compressHistory(messages, {
      provider: this.deps.options.summaryProvider ?? this.deps.caller().provider,
      contextWindow: window,
      thresholdTokens: this.threshold,
      signal: this.deps.signal,
      ...(flush ? { beforeSummary: () => flush(messages).catch(() => undefined) } : {}),
    });
    addUsage(this.deps.caller(), result);
    if (result.compressed) {
      const fallback = result.summaryError ? `; summary call failed (${result.summaryError}), kept excerpts instead` : '';
      this.status(`${why}: compressed ${messages.length} → ${result.messages.length} messages (window ${window} tokens)${fallback}`);
    }
    return result;
  }

  private status(message: string): void {
    this.deps.emit({ type: 'status', kind: 'compression', message });
  }
}

/** Fewer tokens than before: otherwise another pass (or retry) would only repeat itself. */
function madeProgress(result: CompressionResult): boolean {
  return result.compressed && result.tokensAfter < result.tokensBefore;
}

function addUsage(sink: CallerView, result: CompressionResult): void {
  sink.apiCalls += result.apiCalls;
  addUsageInto(sink.usage, result.usage);
}
