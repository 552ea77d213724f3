/**
 * The per-process agent setup: providers built once from the config, one FallbackState shared by every turn
 * (so a rate-limited primary cools down across turns), the system prompt and the iteration budget.
 */
import { FallbackState, createProvider, parseModelRef, type Provider, type ProviderConfig } from '@herald/agent-core';
import type { HeraldConfig } from '../config/load.js';

export interface AgentRuntime {
  primary: Provider;
  fallbacks: Provider[];
  fallbackState: FallbackState;
  systemPrompt: string;
  maxIterations: number;
  /** HERALD_CONTEXT_WINDOW; the model table when absent. Drives compression. */
  contextWindow?: number;
}

export class ModelNotConfiguredError extends Error {
  override name = 'ModelNotConfiguredError';
}

/** Builds the providers; null when HERALD_MODEL is not set (turns then answer with a setup hint). */
export function buildAgentRuntime(config: HeraldConfig): AgentRuntime | null {
  if (!config.model) return null;
  const make = (ref: string): Provider => createProvider(providerConfig(config, ref));
  return {
    primary: make(config.model),
    fallbacks: config.fallbackModels.map(make),
    fallbackState: new FallbackState(),
    systemPrompt: config.systemPrompt,
    maxIterations: config.maxIterations,
    contextWindow: config.contextWindow,
  };
}

/** `provider:model` → what createProvider needs; throws ModelNotConfiguredError naming the missing key. */
export function providerConfig(config: HeraldConfig, ref: string): ProviderConfig {
  const { provider, model } = parseModelRef(ref);
  const section = provider === 'openai' ? config.openai : config.anthropic;
  const envName = provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
  // Local OpenAI-compatible servers (Ollama, llama.cpp) take any key; the hosted APIs need a real one.
  if (!section.apiKey && !section.baseUrl) {
    throw new ModelNotConfiguredError(`${envName}: must be set to use ${ref}`);
  }
  return { provider, model, apiKey: section.apiKey ?? 'not-needed', baseUrl: section.baseUrl };
}
