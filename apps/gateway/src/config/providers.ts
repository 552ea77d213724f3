/**
 * Which provider settings a `provider:model` ref gets from the config. Shared by the turn runner's agent runtime,
 * per-session models and `herald doctor`.
 */
import { parseModelRef, supportsVision, type ProviderConfig } from '@herald/agent-core';
import type { HeraldConfig } from './load.js';

export class ModelNotConfiguredError extends Error {
  override name = 'ModelNotConfiguredError';
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
  // Whether it takes images: the model table, unless HERALD_VISION_OVERRIDES says otherwise.
  const vision = supportsVision(model, config.visionOverrides);
  return { provider, model, apiKey: section.apiKey ?? 'not-needed', baseUrl: section.baseUrl, vision };
}
