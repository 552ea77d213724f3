/**
 * From configuration strings to a Provider: `provider:model` references (HERALD_MODEL, HERALD_FALLBACK_MODELS)
 * and the choice of wire API.
 */
import { createAnthropicProvider } from './anthropic.js';
import { createBedrockProvider } from './bedrock.js';
import { createOpenAIProvider } from './openai.js';
import { createResponsesProvider } from './responses.js';
import type { ApiMode, BuiltinProviderName, ModelRef, Provider, ProviderConfig } from './types.js';

export const BUILTIN_PROVIDERS: readonly BuiltinProviderName[] = ['openai', 'anthropic', 'openai-responses', 'bedrock'];
/** A provider prefix: a built-in name or a configured endpoint's name. */
const PROVIDER_NAME = /^[a-z][a-z0-9_-]*$/;

/**
 * `openai:gpt-4.1-mini` → {provider, model}. Only the first colon splits, so Ollama tags survive
 * (`openai:llama3.1:8b`) and Bedrock ids keep their version (`bedrock:anthropic.claude-3-haiku-20240307-v1:0`).
 * Whether a named endpoint exists is the configuration's business, not the parser's.
 */
export function parseModelRef(ref: string): ModelRef {
  const value = ref.trim();
  const colon = value.indexOf(':');
  const provider = colon > 0 ? value.slice(0, colon).trim().toLowerCase() : '';
  const model = colon > 0 ? value.slice(colon + 1).trim() : '';
  if (!PROVIDER_NAME.test(provider) || model === '') {
    throw new Error(
      `Invalid model reference "${ref}": expected provider:model, e.g. openai:gpt-4.1-mini or anthropic:claude-sonnet-4-5 (providers: ${BUILTIN_PROVIDERS.join(', ')} or a configured endpoint)`,
    );
  }
  return { provider, model };
}

/**
 * Explicit mode first; then the provider prefix; then the base URL, because Anthropic-compatible endpoints
 * (`…/anthropic`) and Bedrock endpoints (`bedrock-runtime.<region>.amazonaws.com`, a VPC endpoint) exist behind
 * named provider entries; else Chat Completions.
 */
export function resolveApiMode(cfg: Pick<ProviderConfig, 'provider' | 'baseUrl' | 'apiMode'>): ApiMode {
  if (cfg.apiMode) return cfg.apiMode;
  if (cfg.provider === 'anthropic') return 'anthropic_messages';
  if (cfg.provider === 'openai-responses') return 'responses';
  if (cfg.provider === 'bedrock') return 'bedrock_converse';
  if (cfg.baseUrl && /bedrock-runtime/i.test(cfg.baseUrl)) return 'bedrock_converse';
  if (cfg.baseUrl && /anthropic/i.test(cfg.baseUrl)) return 'anthropic_messages';
  return 'chat_completions';
}

export function createProvider(cfg: ProviderConfig): Provider {
  switch (resolveApiMode(cfg)) {
    case 'anthropic_messages':
      return createAnthropicProvider(cfg);
    case 'responses':
      return createResponsesProvider(cfg);
    case 'bedrock_converse':
      return createBedrockProvider(cfg);
    case 'chat_completions':
      return createOpenAIProvider(cfg);
  }
}
