/**
 * The `compression` option of runConversation: absent means the loop never compresses on its own. Its own module
 * so the loop's option types can name it without importing the loop compressor, which imports the loop's events.
 */
export interface CompressionOptions {
  /** Context window override (HERALD_CONTEXT_WINDOW); else the model table, lowered by limits providers named. */
  contextWindow?: number;
  /** Share of the window at which the loop compresses; clamped to [0.10, 0.80]. Default 0.50. */
  thresholdRatio?: number;
  /** Preflight passes at most; default 3. */
  maxPreflightPasses?: number;
}
