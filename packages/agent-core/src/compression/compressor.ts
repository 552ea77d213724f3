/**
 * Hermes' compression algorithm, in four steps:
 *   1. split: protect the head (first 3 messages) and a token-budgeted tail (at least the last 20 messages);
 *   2. prune: old tool outputs before the tail become a placeholder (the cheap part, no model call);
 *   3. summarise the middle with one model call — updating the previous summary when there is one — or, when
 *      that call fails, with a deterministic excerpt summary;
 *   4. reassemble head + summary + tail so roles still alternate and no tool call loses its result.
 * Pure apart from the one summary call; the loop and the gateway decide when to call it and what to do after.
 */
import { emptyUsage, type ChatMessage, type Usage } from '../base/types.js';
import type { Provider } from '../providers/types.js';
import { assemble } from './assemble.js';
import { splitForCompression } from './boundaries.js';
import { fallbackSummary } from './fallback-summary.js';
import { pruneOldToolOutputs } from './prune.js';
import { requestSummary, summaryBudget } from './summarize.js';
import { containsSummary, extractSummary, withoutSummary } from './summary-text.js';
import { tailBudgetFor, thresholdFor } from './windows.js';
import { estimateMessagesTokens } from './tokens.js';

export interface CompressOptions {
  /** Writes the summary (the session's own provider; no tools are sent). */
  provider: Provider;
  contextWindow: number;
  /** The trigger the caller uses; the tail budget is 20 % of it. Default: 50 % of the window. */
  thresholdTokens?: number;
  /** Overrides the tail budget (e.g. 0 for "keep only the floor" on an explicit /compress). */
  tailBudgetTokens?: number;
  headMessages?: number;
  minTailMessages?: number;
  signal?: AbortSignal;
  /**
   * Runs once the split has found a middle to summarise, just before the summary call — never when nothing will be
   * compressed (the memory flush: a full-history model call that is only worth its cost when details are about to go).
   * Its errors are the caller's to catch; the compression goes on after it either way.
   */
  beforeSummary?: () => Promise<void>;
}

export interface CompressionResult {
  /** False when there was nothing in the middle to summarise; `messages` is then the input unchanged. */
  compressed: boolean;
  messages: ChatMessage[];
  /** Messages folded into the summary. */
  summarized: number;
  /** Messages kept from the start and from the end (the first tail message may carry the summary merged in). */
  kept: { head: number; tail: number };
  prunedToolOutputs: number;
  tokensBefore: number;
  tokensAfter: number;
  /** Why the summary call failed, when the deterministic fallback summary was used instead. */
  summaryError?: string;
  /** Of the summary call (zero when none was made). */
  usage: Usage;
  apiCalls: number;
}

export async function compressHistory(messages: readonly ChatMessage[], opts: CompressOptions): Promise<CompressionResult> {
  const window = opts.contextWindow;
  const threshold = opts.thresholdTokens ?? thresholdFor(window);
  const tokensBefore = estimateMessagesTokens(messages);
  const { headEnd, tailStart } = splitForCompression(messages, {
    headMessages: opts.headMessages,
    minTailMessages: opts.minTailMessages,
    tailBudgetTokens: opts.tailBudgetTokens ?? tailBudgetFor(threshold),
  });
  const middle = messages.slice(headEnd, tailStart);
  const turns = middle.filter((m) => !isOnlySummary(m));
  const unchanged: CompressionResult = {
    compressed: false,
    messages: [...messages],
    summarized: 0,
    kept: { head: messages.length, tail: 0 },
    prunedToolOutputs: 0,
    tokensBefore,
    tokensAfter: tokensBefore,
    usage: emptyUsage(),
    apiCalls: 0,
  };
  // Only the previous summary in the middle: summarising it again would gain nothing.
  if (turns.length === 0) return unchanged;
  await opts.beforeSummary?.();

  const previous = middle.find((m) => containsSummary(m.content));
  const previousSummary = previous ? extractSummary(previous.content) : null;
  const signal = opts.signal ?? new AbortController().signal;
  const budget = summaryBudget(estimateMessagesTokens(middle), window);
  let body: string;
  let summaryError: string | undefined;
  let usage = emptyUsage();
  try {
    ({ body, usage } = await requestSummary({ provider: opts.provider, turns, previousSummary, budget, window, signal }));
  } catch (err) {
    if (signal.aborted) throw err;
    summaryError = err instanceof Error ? err.message : String(err);
    body = fallbackSummary(turns, previousSummary, summaryError);
  }

  // The middle is gone into the summary (which saw its outputs); what is left to prune is the head's.
  const head = pruneOldToolOutputs(messages.slice(0, headEnd), headEnd);
  const out = assemble(head.messages, body, messages.slice(tailStart));
  const result: CompressionResult = {
    compressed: true,
    messages: out,
    summarized: middle.length,
    kept: { head: headEnd, tail: messages.length - tailStart },
    prunedToolOutputs: head.pruned,
    tokensBefore,
    tokensAfter: estimateMessagesTokens(out),
    usage,
    apiCalls: 1,
  };
  if (summaryError !== undefined) result.summaryError = summaryError;
  return result;
}

/** A standalone summary message: nothing of its own besides the summary. */
function isOnlySummary(m: ChatMessage): boolean {
  return containsSummary(m.content) && withoutSummary(m.content) === '' && !m.tool_calls?.length;
}
