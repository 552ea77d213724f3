/**
 * Per-session models: `/model provider:model` records a model on the session (sessions.model); the turn runner
 * then asks here for that session's providers. Providers are built once per model and cached for the process,
 * the MAX_CACHED_MODELS most recently built (any model of a configured provider can be chosen, so the cache must
 * not grow with every name users try).
 *
 * And the chains of a session's side tasks (SideTaskModels, below): the models side tasks run on — compression
 * summaries (before a turn, inside the loop, /compress) and the memory flush, conversation titles, session_search
 * summaries and image descriptions — one fallback chain per task:
 *
 *   the task's own model and fallbacks (HERALD_COMPRESSION_MODEL / _FALLBACK_MODELS, HERALD_TITLE_…,
 *   HERALD_SEARCH_…), then the shared side-task chain: HERALD_AUXILIARY_MODEL, HERALD_AUXILIARY_FALLBACK_MODELS…,
 *   then the conversation's own chain (the session's /model choice, HERALD_MODEL, HERALD_FALLBACK_MODELS)
 *
 * so a cheap side model that runs out of credit (402) or goes down hands its request to the next model instead of
 * costing the conversation its summary. Unset, a task runs on the shared chain; with nothing set, on the
 * conversation's chain, as turns do. Image descriptions take HERALD_VISION_MODEL and HERALD_VISION_FALLBACK_MODELS,
 * then the vision-capable auxiliary models.
 */
import { createFallbackProvider, createProvider, parseModelRef, providerLabel, setBounded, type Provider, type SideFallback } from '@herald/agent-core';
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

/**
 * Session models kept: built, and with a chain per task. As many as SessionModels keeps built (any model of a
 * configured provider can be chosen with /model, so neither may grow without bound).
 */
const MAX_SESSION_MODELS = 32;

export type SideTaskConfig = Pick<
  HeraldConfig,
  | 'model'
  | 'fallbackModels'
  | 'auxiliaryModel'
  | 'auxiliaryFallbackModels'
  | 'visionModel'
  | 'visionFallbackModels'
  | 'compressionModel'
  | 'compressionFallbackModels'
  | 'titleModel'
  | 'titleFallbackModels'
  | 'searchModel'
  | 'searchFallbackModels'
>;

/** The side tasks that have a chain of their own (image descriptions have theirs: `describer`). */
export type SideTask = 'compression' | 'title' | 'search';

export interface SideTaskOptions {
  /** Told when a side model failed and the next took over (the gateway logs it). */
  onFallback?: (event: SideFallback) => void;
  /** Wraps each model before it joins a chain (the gateway counts its requests in /metrics). */
  wrap?: (provider: Provider) => Provider;
}

export class SideTaskModels {
  private readonly auxiliary: Provider[];
  /** Each task's own models, in front of the shared chain. */
  private readonly own: Record<SideTask, Provider[]>;
  private readonly describerChain: Provider | null;
  private readonly wrap: (provider: Provider) => Provider;
  /** Each model built and wrapped once. */
  private readonly built = new Map<string, Provider>();
  /**
   * Each task's chain by session model (null: none chosen), made once: a turn asks for two of them before it starts,
   * and building one (the model lists, the chain's own de-duplication) cost a few allocations each time. A chain holds
   * no state of its own. At most MAX_SESSION_MODELS kept per task, the oldest going first.
   */
  private readonly chains: Record<SideTask, Map<string | null, Provider | null>> = { compression: new Map(), title: new Map(), search: new Map() };

  /** Builds the auxiliary models now, so a model without its provider's settings stops start-up, naming it. */
  constructor(
    private readonly config: SideTaskConfig,
    private readonly models: SessionModels,
    catalog: ProviderCatalog,
    private readonly opts: SideTaskOptions = {},
  ) {
    this.wrap = opts.wrap ?? ((p: Provider) => p);
    this.auxiliary = auxiliaryRefs(config).map((ref) => this.provider(ref));
    const own = (model: string | undefined, fallbacks: readonly string[]) => (model ? [model, ...fallbacks] : []).map((ref) => this.provider(ref));
    this.own = {
      compression: own(config.compressionModel, config.compressionFallbackModels),
      title: own(config.titleModel, config.titleFallbackModels),
      search: own(config.searchModel, config.searchFallbackModels),
    };
    // The vision models are told they see whatever the table says; auxiliary models describe only if they do.
    const visionRefs = config.visionModel ? [config.visionModel, ...config.visionFallbackModels] : [];
    const vision = visionRefs.map((ref) => this.wrap(createProvider({ ...catalog.configFor(ref), vision: true })));
    const describers = [...vision, ...this.auxiliary.filter((p) => p.vision === true)];
    this.describerChain = describers.length > 0 ? createFallbackProvider(describers, opts) : null;
  }

  /** The chain for one of a session's side tasks; null when no model is configured at all. */
  forSession(sessionModel: string | null, task: SideTask): Provider | null {
    const chains = this.chains[task];
    const known = chains.get(sessionModel);
    return known !== undefined ? known : setBounded(chains, sessionModel, this.chainFor(sessionModel, task), MAX_SESSION_MODELS);
  }

  private chainFor(sessionModel: string | null, task: SideTask): Provider | null {
    // A session's /model may name a model this process cannot build (settings changed since): it is skipped.
    const conversation = conversationRefs(this.config, sessionModel).flatMap((ref) => {
      try {
        return [this.provider(ref)];
      } catch {
        return [];
      }
    });
    const chain = [...this.own[task], ...this.auxiliary, ...conversation];
    return chain.length > 0 ? createFallbackProvider(chain, this.opts) : null;
  }

  /** Writes image descriptions for a main model that cannot see; null when no vision-capable side model is set. */
  describer(): Provider | null {
    return this.describerChain;
  }

  /** Throws SessionModelError naming the missing setting. */
  private provider(ref: string): Provider {
    let made = this.built.get(ref);
    if (!made) {
      made = setBounded(this.built, ref, this.wrap(this.models.provider(ref)), MAX_SESSION_MODELS);
    }
    return made;
  }
}

/** The configuration refuses auxiliary fallbacks without an auxiliary model (load.ts). */
function auxiliaryRefs(config: SideTaskConfig): string[] {
  return config.auxiliaryModel ? [config.auxiliaryModel, ...config.auxiliaryFallbackModels] : [];
}

function conversationRefs(config: SideTaskConfig, sessionModel: string | null): string[] {
  return [sessionModel, config.model, ...config.fallbackModels].filter((r): r is string => typeof r === 'string' && r !== '');
}
