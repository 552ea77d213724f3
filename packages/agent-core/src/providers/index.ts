/** LLM providers: one adapter per wire API behind the Provider contract in types.ts. */
export * from './types.js';
export { classifyError, retryAfterMsFrom } from './errors.js';
export { createOpenAIProvider, toChatMessages, OPENAI_DEFAULT_BASE_URL } from './openai.js';
export { createAnthropicProvider, ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_DEFAULT_MAX_TOKENS } from './anthropic.js';
export { toAnthropicMessages, toAnthropicRequest, toAnthropicTool } from './anthropic-convert.js';
export { createResponsesProvider } from './responses.js';
export { createBedrockProvider, BEDROCK_DEFAULT_MAX_TOKENS } from './bedrock.js';
export { BUILTIN_PROVIDERS, parseModelRef, resolveApiMode, createProvider } from './resolve.js';
export {
  DEFAULT_KEY_COOLDOWNS,
  KEY_STRATEGIES,
  KeyPool,
  MemoryKeyPoolState,
  keyFingerprint,
  singleKey,
  type KeyCooldowns,
  type KeyCooling,
  type KeyPoolOptions,
  type KeyPoolState,
  type KeyStatus,
  type KeyStrategy,
} from './key-pool.js';
export { MAX_CACHE_BREAKPOINTS, breakpointCount, planCacheBreakpoints, type CacheLayout, type CachePlan } from './cache-breakpoints.js';
export { SESSION_HEADING, buildSessionSystemPrompt, splitSystemPrompt, type SessionPromptContext } from './system-prompt.js';
export {
  MODELS,
  DEFAULT_CONTEXT_WINDOW,
  modelInfo,
  contextWindowFor,
  estimateCostUsd,
  supportsVision,
  overrideFor,
  type ModelInfo,
  type ModelPrice,
} from './models.js';
export { DEFAULT_STALL_TIMEOUT_MS } from './request.js';
export { createSpeechSynthesizer, SPEECH_MAX_INPUT_CHARS, type SpeechConfig, type SpeechFormat, type SpeechSynthesizer } from './speech.js';
export { createFallbackProvider, uniqueProviders, type FallbackProviderOptions, type SideFallback } from './fallback.js';
