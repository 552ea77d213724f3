/** Context compression: token accounting, thresholds, the compressor, and the agent loop's triggers. */
export {
  CHARS_PER_TOKEN,
  DEFAULT_IMAGE_TOKENS,
  IMAGE_TOKENS,
  imageTokensFor,
  estimateMessageTokens,
  estimateMessagesTokens,
  estimateRequestTokens,
  estimateTextTokens,
} from './tokens.js';
export {
  DEFAULT_THRESHOLD_RATIO,
  GATEWAY_THRESHOLD_RATIO,
  GATEWAY_WARNING_RATIO,
  MAX_THRESHOLD_RATIO,
  MIN_THRESHOLD_RATIO,
  TAIL_BUDGET_RATIO,
  clampThresholdRatio,
  gatewayThreshold,
  gatewayWarningThreshold,
  tailBudgetFor,
  thresholdFor,
} from './windows.js';
export {
  ASSUMED_WINDOW_STEPS,
  ContextWindows,
  LEARNT_WINDOW_TTL_MS,
  processContextWindows,
  type ContextWindowsOptions,
  type LearntWindow,
  type WindowBook,
  type WindowKey,
  effectiveContextWindow,
  forgetLearntContextWindows,
  learnContextWindow,
  learntContextWindow,
  stepDownWindow,
} from './windows.js';
export { HEAD_MESSAGES, MIN_TAIL_MESSAGES, splitForCompression, type Split, type SplitOptions } from './boundaries.js';
export { PRUNED_TOOL_OUTPUT, PRUNE_MIN_CHARS, pruneOldToolOutputs } from './prune.js';
export { SUMMARY_END_MARKER, SUMMARY_PREFIX, containsSummary, extractSummary } from './summary-text.js';
export { MAX_SUMMARY_TOKENS, MIN_SUMMARY_TOKENS, SUMMARIZER_SYSTEM_PROMPT, summaryBudget } from './summarize.js';
export { compressHistory, type CompressOptions, type CompressionResult } from './compressor.js';
export { LoopCompressor, MAX_PREFLIGHT_PASSES } from './loop-compressor.js';
export type { CompressionOptions } from './options.js';
