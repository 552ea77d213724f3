/**
 * Which provider settings a `provider:model` ref gets from the config: base URL, API mode, the key pool, the
 * stall timeout. Shared by the turn runner's agent runtime, per-session models and `herald doctor`.
 *
 * Prefixes: `openai` (Chat Completions; OPENAI_BASE_URL for any compatible server), `openai-responses` (the
 * Responses API with OpenAI's keys), `anthropic`, `bedrock` (AWS credential chain), and each named endpoint of
 * HERALD_ENDPOINTS (`openrouter:anthropic/claude-sonnet-4.5`). One key pool per credential set, built once per
 * catalog, so every model of a provider shares its keys' cooldowns; the gateway keeps their state in Redis.
 */
import {
  KeyPool,
  MemoryKeyPoolState,
  overrideFor,
  parseModelRef,
  supportsVision,
  type KeyPoolState,
  type ProviderConfig,
  type TransportReset,
} from '@herald/agent-core';
import { apiModeFor, envPrefix, type EndpointConfig } from './endpoints.js';
import type { HeraldConfig } from './load.js';

export class ModelNotConfiguredError extends Error {
  override name = 'ModelNotConfiguredError';
}

export interface ProviderCatalogOptions {
  /** Shared key state (Redis in the gateway); in-process when absent. */
  keyState?: KeyPoolState;
  onTransportReset?: (event: TransportReset) => void;
}

export interface PoolStatus {
  pool: string;
  strategy: string;
  keys: Awaited<ReturnType<KeyPool['status']>>;
}

export class ProviderCatalog {
  private readonly pools = new Map<string, KeyPool>();
  private readonly keyState: KeyPoolState;

  constructor(
    private readonly config: HeraldConfig,
    private readonly opts: ProviderCatalogOptions = {},
  ) {
    this.keyState = opts.keyState ?? new MemoryKeyPoolState();
  }

  /** `provider:model` → what createProvider needs; throws ModelNotConfiguredError naming the missing setting. */
  configFor(ref: string): ProviderConfig {
    const { provider, model } = parseModelRef(ref);
    const apiMode = apiModeFor(this.config.modelApiModes, `${provider}:${model}`);
    const common: ProviderConfig = {
      provider,
      model,
      stallTimeoutMs: this.config.streamStallTimeoutMs,
      onTransportReset: this.opts.onTransportReset,
      // Whether it takes images: the model table, unless HERALD_VISION_OVERRIDES says otherwise.
      vision: supportsVision(model, this.config.visionOverrides),
      ...(apiMode ? { apiMode } : {}),
      ...maxTokensOf(model, this.config.maxTokens),
      ...(this.config.reasoningEffort ? { reasoningEffort: this.config.reasoningEffort } : {}),
      ...(this.config.thinkingBudget ? { thinkingBudget: this.config.thinkingBudget } : {}),
    };
    switch (provider) {
      case 'bedrock':
        return { ...common, apiMode: 'bedrock_converse' };
      case 'openai':
      case 'openai-responses':
        return { ...common, ...this.credentials('openai', this.config.openai.baseUrl, 'OPENAI_API_KEY', ref) };
      case 'anthropic':
        return { ...common, ...this.credentials('anthropic', this.config.anthropic.baseUrl, 'ANTHROPIC_API_KEY', ref) };
      default: {
        const endpoint = this.endpoint(provider, ref);
        return {
          ...common,
          ...(endpoint.api_mode && !common.apiMode ? { apiMode: endpoint.api_mode } : {}),
          ...(endpoint.cache_markers === undefined ? {} : { cacheMarkers: endpoint.cache_markers }),
          ...this.credentials(endpoint.name, endpoint.base_url, `${envPrefix(endpoint.name)}_API_KEY`, ref),
        };
      }
    }
  }

  /** Every configured pool's keys (fingerprints only) and their state, for /health/detailed and doctor. */
  async status(): Promise<PoolStatus[]> {
    const out: PoolStatus[] = [];
    for (const label of Object.keys(this.config.keyPools)) {
      const pool = this.pool(label);
      if (pool) out.push({ pool: label, strategy: pool.strategy, keys: await pool.status() });
    }
    return out;
  }

  private credentials(label: string, baseUrl: string | undefined, envName: string, ref: string): Pick<ProviderConfig, 'keyPool' | 'apiKey' | 'baseUrl'> {
    const pool = this.pool(label);
    // Local OpenAI-compatible servers (Ollama, llama.cpp, vLLM) take any key; the hosted APIs need a real one.
    if (!pool && !baseUrl) throw new ModelNotConfiguredError(`${envName}: must be set to use ${ref}`);
    return { ...(pool ? { keyPool: pool } : { apiKey: 'not-needed' }), ...(baseUrl ? { baseUrl } : {}) };
  }

  private pool(label: string): KeyPool | undefined {
    let pool = this.pools.get(label);
    const keys = this.config.keyPools[label] ?? [];
    if (!pool && keys.length > 0) {
      pool = new KeyPool({
        label,
        keys,
        strategy: this.config.keyStrategy,
        state: this.keyState,
        cooldowns: {
          rateLimitMs: this.config.keyRateLimitCooldownS * 1000,
          authMs: this.config.keyCooldownS * 1000,
          billingMs: this.config.keyBillingCooldownS * 1000,
        },
      });
      this.pools.set(label, pool);
    }
    return pool;
  }

  private endpoint(name: string, ref: string): EndpointConfig {
    const endpoint = this.config.endpoints.find((e) => e.name === name);
    if (!endpoint) {
      const known = ['openai', 'openai-responses', 'anthropic', 'bedrock', ...this.config.endpoints.map((e) => e.name)];
      throw new ModelNotConfiguredError(`HERALD_ENDPOINTS: no endpoint named "${name}" for ${ref} (known: ${known.join(', ')})`);
    }
    return endpoint;
  }
}

/** `provider:model` → what createProvider needs, with in-process key state (doctor, model checks). */
export function providerConfig(config: HeraldConfig, ref: string, catalog: ProviderCatalog = new ProviderCatalog(config)): ProviderConfig {
  return catalog.configFor(ref);
}

/** HERALD_MAX_TOKENS for this model, as ProviderConfig fields (none when the setting names no such model). */
function maxTokensOf(model: string, perModel: Readonly<Record<string, number>>): { maxTokens?: number } {
  const maxTokens = overrideFor(model, perModel);
  return maxTokens === undefined ? {} : { maxTokens };
}
