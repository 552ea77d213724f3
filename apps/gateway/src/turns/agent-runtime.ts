/**
 * The per-process agent setup: providers built once from the config, one FallbackState shared by every turn
 * (so a rate-limited primary cools down across turns), the system prompt and the iteration budget.
 */
import { FallbackState, createProvider, type Provider } from '@herald/agent-core';
import type { HeraldConfig } from '../config/load.js';
import { ProviderCatalog } from '../config/providers.js';

export interface AgentRuntime {
  primary: Provider;
  fallbacks: Provider[];
  fallbackState: FallbackState;
  systemPrompt: string;
  maxIterations: number;
  /** HERALD_CONTEXT_WINDOW; the model table when absent. Drives compression. */
  contextWindow?: number;
}

/** Builds the providers; null when HERALD_MODEL is not set (turns then answer with a setup hint). */
export function buildAgentRuntime(config: HeraldConfig, catalog: ProviderCatalog = new ProviderCatalog(config)): AgentRuntime | null {
  if (!config.model) return null;
  const make = (ref: string): Provider => createProvider(catalog.configFor(ref));
  return {
    primary: make(config.model),
    fallbacks: config.fallbackModels.map(make),
    fallbackState: new FallbackState(),
    systemPrompt: config.systemPrompt,
    maxIterations: config.maxIterations,
    contextWindow: config.contextWindow,
  };
}
