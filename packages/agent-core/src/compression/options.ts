/**
 * The `compression` option of runConversation: absent means the loop never compresses on its own. Its own module
 * so the loop's option types can name it without importing the loop compressor, which imports the loop's events.
 */
import type { ChatMessage } from '../types.js';

export interface CompressionOptions {
  /** Context window override (HERALD_CONTEXT_WINDOW); else the model table, lowered by limits providers named. */
  contextWindow?: number;
  /** Share of the window at which the loop compresses; clamped to [0.10, 0.80]. Default 0.50. */
  thresholdRatio?: number;
  /** Preflight passes at most; default 3. */
  maxPreflightPasses?: number;
  /**
   * Runs before each compression (once for all preflight passes) with the messages about to be summarised: the
   * memory-only flush, so notes survive what the summary leaves out. Best effort: a failure never stops the
   * compression.
   */
  beforeCompress?: (messages: readonly ChatMessage[]) => Promise<void>;
}
