/** LLM providers: one adapter per wire API behind the Provider contract in types.ts. */
export * from './types.js';
export { classifyError, retryAfterMsFrom } from './errors.js';
export { createOpenAIProvider, toChatMessages, OPENAI_DEFAULT_BASE_URL } from './openai.js';
export { createAnthropicProvider, ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_DEFAULT_MAX_TOKENS } from './anthropic.js';
export { toAnthropicMessages, toAnthropicSystem, toAnthropicTool } from './anthropic-convert.js';
export { parseModelRef, resolveApiMode, createProvider } from './resolve.js';
export {
  MODELS,
  DEFAULT_CONTEXT_WINDOW,
  modelInfo,
  contextWindowFor,
  estimateCostUsd,
  type ModelInfo,
  type ModelPrice,
} from './models.js';
export { DEFAULT_IDLE_TIMEOUT_MS } from './guard.js';
export { createSpeechSynthesizer, SPEECH_MAX_INPUT_CHARS, type SpeechConfig, type SpeechFormat, type SpeechSynthesizer } from './speech.js';
