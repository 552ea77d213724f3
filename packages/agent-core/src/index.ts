/** @herald/agent-core: the provider-neutral agent loop, providers, tools and the session store. */
export * from './base/types.js';
export * from './providers/index.js';
export * from './store/index.js';
export * from './compression/index.js';
export { hostTimeZone, localDate } from './base/time-zones.js';
export { setBounded } from './base/bounded-map.js';
export { isRecord, recordOr } from './base/json-values.js';

export { runConversation } from './loop/run-conversation.js';
export {
  BUDGET_SUMMARY_PROMPT,
  CONTINUE_PROMPT,
  MAX_CONTINUATIONS,
  MAX_INVALID_JSON_RETRIES,
  MAX_UNKNOWN_TOOL_RESPONSES,
  PARTIAL_BUDGET_EXHAUSTED,
  PARTIAL_CONTENT_FILTER,
  PARTIAL_OUTPUT_LIMIT,
  PARTIAL_THINKING_EXHAUSTED,
  PARTIAL_UNKNOWN_TOOLS,
} from './loop/run-conversation.js';
export type {
  AgentEvent,
  ContextOverflowHandler,
  ConversationOptions,
  ConversationResult,
  StatusKind,
} from './loop/types.js';
export { Agent, createAgent, type AgentOptions, type ChatOptions } from './loop/agent.js';
export { DEFAULT_MAX_ITERATIONS, IterationBudget } from './loop/budget.js';
export {
  FallbackState,
  MAX_RATE_LIMIT_COOLDOWN_MS,
  ProviderChain,
  RATE_LIMIT_COOLDOWN_MS,
  providerLabel,
  type FallbackStateOptions,
} from './providers/fallback.js';
export { DEFAULT_RETRY_POLICY, abortableSleep, backoffDelay, type RetryPolicy } from './providers/retry.js';
export { MISSING_RESULT_TEXT, sanitizeHistory, sanitizeText } from './loop/transcript.js';
export { FUZZY_MATCH_THRESHOLD, normaliseToolName, repairToolName, similarity } from './loop/tool-names.js';
export { CANCELLED_RESULT, MAX_PARALLEL_TOOLS, MAX_TOOL_RESULT_CHARS, truncateResult } from './loop/execute-tools.js';
export { ALLOW, type BeforeVerdict, type ToolCallInfo, type ToolCallOutcome, type ToolHook } from './loop/tool-hooks.js';

export {
  ToolRegistry,
  checkAvailability,
  toToolOutput,
  toolSchemas,
  unavailableReason,
  type Availability,
  type Tool,
  type ToolContext,
  type ToolOutput,
  type UnavailableTool,
} from './tools/registry.js';
export {
  ToolsetCycleError,
  ToolsetRegistry,
  UnknownToolsetError,
  defaultToolsets,
  defineToolset,
  resolveToolsets,
  toolsForToolsets,
  type Toolset,
  type ToolsetDefinition,
} from './tools/toolsets.js';
export * from './builtins/index.js';
export { toToolParameters } from './tools/json-schema.js';
export { isCompleted, toShareGpt, type ShareGptRecord, type ShareGptTurn, type TrajectorySession } from './trajectory/sharegpt.js';
