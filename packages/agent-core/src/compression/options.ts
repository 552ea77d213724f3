/**
 * The `compression` option of runConversation: absent means the loop never compresses on its own. Its own module
 * so the loop's option types can name it without importing the loop compressor, which imports the loop's events.
 */
import type { ChatMessage } from '../base/types.js';
import type { Provider } from '../providers/types.js';
import type { ContextWindows } from './windows.js';

export interface CompressionOptions {
  /** Context window override (HERALD_CONTEXT_WINDOW); else the model table, lowered by limits providers named. */
  contextWindow?: number;
  /** Limits providers named (the gateway's are in the store, shared by every worker); in-process when absent. */
  windows?: ContextWindows;
  /** Share of the window at which the loop compresses; clamped to [0.10, 0.80]. Default 0.50. */
  thresholdRatio?: number;
  /**
   * Writes the summaries (the auxiliary model and its fallbacks); absent, the provider the turn is using at the
   * time. The window stays the conversation model's: it is that model's context being made room in.
   */
  summaryProvider?: Provider;
  /**
   * Share of the threshold past which a fallback mid-call compresses first (the next model's prompt cache is cold,
   * so the compression costs no cached prefix then); default 0.85, 0 never.
   */
  coldCacheShare?: number;
  /** Preflight passes at most; default 3. */
  maxPreflightPasses?: number;
  /**
   * Runs before each compression (once for all preflight passes) with the messages about to be summarised: the
   * memory-only flush, so notes survive what the summary leaves out. Only when the compression has a middle to
   * summarise (never for a trigger that compresses nothing). Best effort: a failure never stops the compression.
   */
  beforeCompress?: (messages: readonly ChatMessage[]) => Promise<void>;
}
