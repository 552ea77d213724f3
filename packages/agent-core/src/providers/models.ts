/**
 * What we know about current models: context window (tokens), output cap, and list price in USD per million
 * tokens. Lookup is by longest prefix at a name boundary, so dated snapshots (`gpt-4.1-mini-2025-04-14`,
 * `claude-sonnet-4-5-20250929`), Ollama tags (`:latest`) and OpenRouter ids (`anthropic/claude-sonnet-4.5`)
 * find their family.
 */
import { setBounded } from '../base/bounded-map.js';
import type { Usage } from '../base/types.js';

export const DEFAULT_CONTEXT_WINDOW = 128_000;
const TOKENS_PER_PRICE_UNIT = 1_000_000;

export interface ModelPrice {
  input: number;
  output: number;
  /** Cached input read; defaults to the input price when unknown. */
  cacheRead?: number;
  /** Cache write (Anthropic); defaults to the input price when unknown. */
  cacheWrite?: number;
}

export interface ModelInfo {
  contextWindow: number;
  /** Largest max_tokens the model accepts, where it matters to us (Anthropic requires max_tokens). */
  maxOutput?: number;
  price?: ModelPrice;
  /** Takes images as input. Absent: not known to, so images are described or declined instead of sent. */
  vision?: boolean;
}

const GPT_41_WINDOW = 1_047_576;
const O_SERIES_WINDOW = 200_000;
const GPT_5_WINDOW = 400_000;
const GPT_5_OUTPUT = 128_000;
const CLAUDE_WINDOW = 200_000;
/** Claude 4.6 models take a million tokens of context and write up to 128K. */
const CLAUDE_46_WINDOW = 1_000_000;
const CLAUDE_46_OUTPUT = 128_000;

export const MODELS: Readonly<Record<string, ModelInfo>> = {
  // OpenAI
  'gpt-4.1': { contextWindow: GPT_41_WINDOW, price: { input: 2, output: 8, cacheRead: 0.5 }, vision: true },
  'gpt-4.1-mini': { contextWindow: GPT_41_WINDOW, price: { input: 0.4, output: 1.6, cacheRead: 0.1 }, vision: true },
  'gpt-4.1-nano': { contextWindow: GPT_41_WINDOW, price: { input: 0.1, output: 0.4, cacheRead: 0.025 }, vision: true },
  'gpt-4o': { contextWindow: 128_000, price: { input: 2.5, output: 10, cacheRead: 1.25 }, vision: true },
  'gpt-4o-mini': { contextWindow: 128_000, price: { input: 0.15, output: 0.6, cacheRead: 0.075 }, vision: true },
  'gpt-4-turbo': { contextWindow: 128_000, price: { input: 10, output: 30 }, vision: true },
  'gpt-4': { contextWindow: 8_192, price: { input: 30, output: 60 } },
  'gpt-3.5-turbo': { contextWindow: 16_385, price: { input: 0.5, output: 1.5 } },
  o1: { contextWindow: O_SERIES_WINDOW, price: { input: 15, output: 60, cacheRead: 7.5 }, vision: true },
  'o1-mini': { contextWindow: 128_000, price: { input: 1.1, output: 4.4, cacheRead: 0.55 } },
  o3: { contextWindow: O_SERIES_WINDOW, price: { input: 2, output: 8, cacheRead: 0.5 }, vision: true },
  'o3-mini': { contextWindow: O_SERIES_WINDOW, price: { input: 1.1, output: 4.4, cacheRead: 0.55 } },
  'o4-mini': { contextWindow: O_SERIES_WINDOW, price: { input: 1.1, output: 4.4, cacheRead: 0.275 }, vision: true },
  'gpt-5': { contextWindow: GPT_5_WINDOW, maxOutput: GPT_5_OUTPUT, price: { input: 1.25, output: 10, cacheRead: 0.125 }, vision: true },
  'gpt-5-mini': { contextWindow: GPT_5_WINDOW, maxOutput: GPT_5_OUTPUT, price: { input: 0.25, output: 2, cacheRead: 0.025 }, vision: true },
  'gpt-5-nano': { contextWindow: GPT_5_WINDOW, maxOutput: GPT_5_OUTPUT, price: { input: 0.05, output: 0.4, cacheRead: 0.005 }, vision: true },
  'gpt-5-chat': { contextWindow: 128_000, maxOutput: 16_384, price: { input: 1.25, output: 10, cacheRead: 0.125 }, vision: true },
  'gpt-5-codex': { contextWindow: GPT_5_WINDOW, maxOutput: GPT_5_OUTPUT, price: { input: 1.25, output: 10, cacheRead: 0.125 }, vision: true },
  'gpt-5.1': { contextWindow: GPT_5_WINDOW, maxOutput: GPT_5_OUTPUT, price: { input: 1.25, output: 10, cacheRead: 0.125 }, vision: true },
  'gpt-5.1-codex': { contextWindow: GPT_5_WINDOW, maxOutput: GPT_5_OUTPUT, price: { input: 1.25, output: 10, cacheRead: 0.125 }, vision: true },
  'gpt-5.2': { contextWindow: GPT_5_WINDOW, maxOutput: GPT_5_OUTPUT, price: { input: 1.75, output: 14, cacheRead: 0.175 }, vision: true },
  // Anthropic (cache write = 1.25 × input for the 5-minute TTL, cache read = 0.1 × input)
  'claude-opus-4-6': {
    contextWindow: CLAUDE_46_WINDOW,
    maxOutput: CLAUDE_46_OUTPUT,
    price: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    vision: true,
  },
  'claude-sonnet-4-6': {
    contextWindow: CLAUDE_46_WINDOW,
    maxOutput: CLAUDE_46_OUTPUT,
    price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    vision: true,
  },
  'claude-opus-4-5': { contextWindow: CLAUDE_WINDOW, maxOutput: 64_000, price: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 }, vision: true },
  'claude-opus-4-1': { contextWindow: CLAUDE_WINDOW, maxOutput: 32_000, price: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 }, vision: true },
  'claude-opus-4': { contextWindow: CLAUDE_WINDOW, maxOutput: 32_000, price: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 }, vision: true },
  'claude-sonnet-4-5': { contextWindow: CLAUDE_WINDOW, maxOutput: 64_000, price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, vision: true },
  'claude-sonnet-4': { contextWindow: CLAUDE_WINDOW, maxOutput: 64_000, price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, vision: true },
  'claude-haiku-4-5': { contextWindow: CLAUDE_WINDOW, maxOutput: 64_000, price: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 }, vision: true },
  'claude-3-7-sonnet': { contextWindow: CLAUDE_WINDOW, maxOutput: 64_000, price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, vision: true },
  'claude-3-5-sonnet': { contextWindow: CLAUDE_WINDOW, maxOutput: 8_192, price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, vision: true },
  'claude-3-5-haiku': { contextWindow: CLAUDE_WINDOW, maxOutput: 8_192, price: { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 }, vision: true },
  // Any other Claude: every current one has at least this window; no price, so no cost estimate.
  claude: { contextWindow: CLAUDE_WINDOW, vision: true },
};

/** Separators that may follow a family name: snapshot dates, Ollama tags, Vertex versions. */
const NAME_BOUNDARY = /^[-:@]/;

/** The table entry for a model name, or undefined when we know nothing about it. */
export function modelInfo(model: string): ModelInfo | undefined {
  // Asked several times per call (window, price, vision) about the same few names: each name is looked up once.
  if (known.has(model)) return known.get(model);
  return setBounded(known, model, lookUp(model), MAX_KNOWN_NAMES);
}

/** Names looked up so far, and what the table said (undefined included); bounded, the oldest going first. */
const known = new Map<string, ModelInfo | undefined>();
const MAX_KNOWN_NAMES = 256;

function lookUp(model: string): ModelInfo | undefined {
  const name = normalise(model);
  let best: string | undefined;
  for (const key of Object.keys(MODELS)) {
    const matches = name === key || (name.startsWith(key) && NAME_BOUNDARY.test(name.slice(key.length)));
    if (matches && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : MODELS[best];
}

/** The context window to budget against: the override (HERALD_CONTEXT_WINDOW) wins, then the table, then 128k. */
export function contextWindowFor(model: string, override?: number): number {
  if (override !== undefined && Number.isFinite(override) && override > 0) return Math.floor(override);
  return modelInfo(model)?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
}

/**
 * Whether a model takes images. `overrides` (HERALD_VISION_OVERRIDES) maps model names to true/false and wins over
 * the table; its names match the way the table's do (a family name covers its snapshots and tags).
 */
export function supportsVision(model: string, overrides: Readonly<Record<string, boolean>> = {}): boolean {
  return overrideFor(model, overrides) ?? modelInfo(model)?.vision === true;
}

/**
 * The value a per-model setting gives this model (HERALD_VISION_OVERRIDES, HERALD_MAX_TOKENS): names match the way
 * the table's do (a family name covers its snapshots and tags), the longest match wins; undefined when none does.
 */
export function overrideFor<T>(model: string, overrides: Readonly<Record<string, T>>): T | undefined {
  const name = normalise(model);
  let best: string | undefined;
  for (const key of Object.keys(overrides)) {
    const k = normalise(key);
    const matches = name === k || (name.startsWith(k) && NAME_BOUNDARY.test(name.slice(k.length)));
    if (matches && (best === undefined || k.length > normalise(best).length)) best = key;
  }
  return best === undefined ? undefined : overrides[best];
}

/**
 * Estimated cost of one call (or a session's totals) in USD; undefined when the model's price is unknown. `price`:
 * the operator's price for the model (HERALD_PRICES) instead of the table's.
 */
export function estimateCostUsd(model: string, usage: Usage, price: ModelPrice | undefined = modelInfo(model)?.price): number | undefined {
  if (!price) return undefined;
  const cost =
    usage.input * price.input +
    usage.output * price.output +
    usage.cacheRead * (price.cacheRead ?? price.input) +
    usage.cacheWrite * (price.cacheWrite ?? price.input);
  return cost / TOKENS_PER_PRICE_UNIT;
}

/** Lower-case, without an OpenRouter-style `vendor/` prefix or a Bedrock `us.anthropic.` one, with Claude's `4.5` spelled `4-5`. */
function normalise(model: string): string {
  let name = model.trim().toLowerCase();
  const slash = name.lastIndexOf('/');
  if (slash >= 0) name = name.slice(slash + 1);
  // Bedrock ids: an optional cross-region prefix and the vendor (`us.anthropic.claude-sonnet-4-5-…-v1:0`).
  name = name.replace(/^(?:[a-z]{2,4}\.)?anthropic\./, '');
  if (name.startsWith('claude-')) name = name.replace(/(\d)\.(\d)/g, '$1-$2');
  return name;
}
