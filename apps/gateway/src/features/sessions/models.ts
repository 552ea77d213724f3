/**
 * Per-session models: `/model provider:model` records a model on the session (sessions.model); the turn runner
 * then asks here for that session's providers. Providers are built once per model and cached for the process,
 * the MAX_CACHED_MODELS most recently built (any model of a configured provider can be chosen, so the cache must
 * not grow with every name users try).
 */
import { createProvider, parseModelRef, providerLabel, setBounded, type Provider } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';
import { ProviderCatalog, providerConfig } from '../../support/config/providers.js';

export class SessionModelError extends Error {
  override name = 'SessionModelError';
}

export interface TurnProviders {
  primary: Provider;
  fallbacks: Provider[];
}

/** Providers kept built; one evicted is built again when a session asks for its model. */
export const MAX_CACHED_MODELS = 32;

export class SessionModels {
  private readonly cache = new Map<string, Provider>();

  /** How many providers are kept built (bounded by MAX_CACHED_MODELS). */
  get cachedCount(): number {
    return this.cache.size;
  }

  constructor(
    config: HeraldConfig,
    private readonly catalog: ProviderCatalog = new ProviderCatalog(config),
  ) {}

  /**
   * The providers a turn of this session uses: the session's own model first, then the configured primary and
   * fallbacks (a chosen model that is down should not leave the user without an answer).
   */
  providersFor(runtime: TurnProviders, sessionModel: string | null): TurnProviders {
    const { primary, fallbacks } = runtime;
    if (!sessionModel || sessionModel === providerLabel(primary)) return { primary, fallbacks };
    const chosen = this.provider(sessionModel);
    return { primary: chosen, fallbacks: [primary, ...fallbacks].filter((p) => providerLabel(p) !== sessionModel) };
  }

  /**
   * A provider for `provider:model` built from this process's settings (used where no agent runtime exists,
   * e.g. /compress and the memory flush of /new on an ingress process). Throws SessionModelError.
   */
  provider(ref: string): Provider {
    let made = this.cache.get(ref);
    if (!made) {
      try {
        made = createProvider(this.catalog.configFor(ref));
      } catch (err) {
        throw new SessionModelError(`${ref}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      setBounded(this.cache, ref, made, MAX_CACHED_MODELS);
    }
    return made;
  }
}

/** The models offered by a bare /model: the configured primary and fallbacks. */
export function modelChoices(config: { model?: string; fallbackModels: readonly string[] }): string[] {
  return [...new Set([config.model, ...config.fallbackModels].filter((m): m is string => typeof m === 'string'))];
}

/** `provider:model` as typed → the canonical ref, or why it cannot be used here. */
export function checkModelRef(config: HeraldConfig, input: string): { ok: true; ref: string } | { ok: false; reason: string } {
  let ref: string;
  try {
    const parsed = parseModelRef(input);
    ref = `${parsed.provider}:${parsed.model}`;
  } catch {
    return { ok: false, reason: `"${input}" is not provider:model, e.g. openai:gpt-4.1-mini or anthropic:claude-sonnet-4-5.` };
  }
  try {
    providerConfig(config, ref);
  } catch (err) {
    return { ok: false, reason: `${ref} cannot be used here (${err instanceof Error ? err.message : String(err)}).` };
  }
  return { ok: true, ref };
}
