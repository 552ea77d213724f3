/**
 * The per-process agent setup: providers built once from the config, one FallbackState shared by every turn
 * (so a rate-limited primary cools down across turns), the system prompt and the iteration budget.
 */
import { FallbackState, createProvider, type Provider } from '@herald/agent-core';
import type { HeraldConfig } from '../support/config/load.js';
import { ProviderCatalog } from '../support/config/providers.js';

export interface AgentRuntime {
  primary: Provider;
  fallbacks: Provider[];
  fallbackState: FallbackState;
  systemPrompt: string;
  maxIterations: number;
  /** HERALD_CONTEXT_WINDOW; the model table when absent. Drives compression. */
  contextWindow?: number;
}

/** What an agent is made of: the top-level settings, or one agent profile (features/profiles/table.ts). */
export interface AgentSpec {
  model?: string;
  fallbackModels: readonly string[];
  systemPrompt: string;
  maxIterations: number;
}

/**
 * Builds the providers; null when no model is set (turns then answer with a setup hint). `spec`: a profile's
 * model, fallbacks, prompt and budget instead of the top-level ones.
 */
export function buildAgentRuntime(config: HeraldConfig, catalog: ProviderCatalog = new ProviderCatalog(config), spec: AgentSpec = config): AgentRuntime | null {
  if (!spec.model) return null;
  const make = (ref: string): Provider => createProvider(catalog.configFor(ref));
  return {
    primary: make(spec.model),
    fallbacks: spec.fallbackModels.map(make),
    fallbackState: new FallbackState(),
    systemPrompt: spec.systemPrompt,
    maxIterations: spec.maxIterations,
    contextWindow: config.contextWindow,
  };
}
