/**
 * From configuration strings to a Provider: `provider:model` references (HERALD_MODEL, HERALD_FALLBACK_MODELS)
 * and the choice of wire API.
 */
import { createAnthropicProvider } from './anthropic.js';
import { createOpenAIProvider } from './openai.js';
import type { ApiMode, ModelRef, Provider, ProviderConfig, ProviderName } from './types.js';

const PROVIDER_NAMES: readonly ProviderName[] = ['openai', 'anthropic'];

/**
 * `openai:gpt-4.1-mini` → {provider, model}. Only the first colon splits, so Ollama tags survive
 * (`openai:llama3.1:8b`).
 */
export function parseModelRef(ref: string): ModelRef {
  const value = ref.trim();
  const colon = value.indexOf(':');
  const provider = colon > 0 ? value.slice(0, colon).trim().toLowerCase() : '';
  const model = colon > 0 ? value.slice(colon + 1).trim() : '';
  if (!isProviderName(provider) || model === '') {
    throw new Error(
      `Invalid model reference "${ref}": expected provider:model, e.g. openai:gpt-4.1-mini or anthropic:claude-sonnet-4-5 (providers: ${PROVIDER_NAMES.join(', ')})`,
    );
  }
  return { provider, model };
}

/**
 * Explicit mode first; then the provider (anthropic speaks Messages); then the base URL, because
 * Anthropic-compatible endpoints (`…/anthropic`) exist behind OpenAI-style provider entries; else Chat Completions.
 */
export function resolveApiMode(cfg: Pick<ProviderConfig, 'provider' | 'baseUrl' | 'apiMode'>): ApiMode {
  if (cfg.apiMode) return cfg.apiMode;
  if (cfg.provider === 'anthropic') return 'anthropic_messages';
  if (cfg.baseUrl && /anthropic/i.test(cfg.baseUrl)) return 'anthropic_messages';
  return 'chat_completions';
}

export function createProvider(cfg: ProviderConfig): Provider {
  return resolveApiMode(cfg) === 'anthropic_messages' ? createAnthropicProvider(cfg) : createOpenAIProvider(cfg);
}

function isProviderName(v: string): v is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(v);
}
