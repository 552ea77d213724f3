/**
 * The providers' prompt-cache accounting, modelled on their public docs, so a test or the benchmark can see how much
 * of each request a provider would have served from its cache (opt in with `FakeOptions.promptCache`).
 *
 * - **Anthropic** (explicit): a request names at most 4 `cache_control` breakpoints (more: a 400). The prompt is the
 *   blocks in the order tools → system → messages; a breakpoint caches the prefix that ends at its block, when that
 *   prefix holds at least the model's minimum (1,024 tokens for Sonnet/Opus). A later request reads from the cache
 *   when, at one of its breakpoints or one of the 20 blocks before it, the prefix is byte-identical to a cached one;
 *   an entry lives 5 minutes, refreshed on every hit. Usage: `input_tokens` (after the cached and written parts),
 *   `cache_read_input_tokens`, `cache_creation_input_tokens`.
 * - **OpenAI** (automatic, Chat Completions and Responses): prompts of 1,024 tokens or more are cached in prefixes of
 *   1,024 tokens and then 128-token steps; a request reads the longest prefix an earlier one left (the tools and
 *   instructions first, then the messages in order). Usage: `cached_tokens` inside the prompt/input tokens.
 *   Requests are routed to a cache machine by a hash of the prompt's first tokens combined with `prompt_cache_key`
 *   when one is sent, so requests with different keys never read each other's prefixes (and keyless ones share
 *   theirs); the overflow of a busy key to other machines (past about 15 requests a minute) is not modelled.
 *
 * Tokens are estimated as the stand-ins estimate them everywhere (4 characters each); caches are per model.
 */
import { createHash, type Hash } from 'node:crypto';

const CHARS_PER_TOKEN = 4;
const ANTHROPIC_MAX_BREAKPOINTS = 4;
const ANTHROPIC_LOOKBACK_BLOCKS = 20;
const OPENAI_MIN_TOKENS = 1_024;
const OPENAI_STEP_TOKENS = 128;

export interface PromptCacheOptions {
  /** The smallest cacheable prefix, in tokens (Anthropic: 1,024 for Sonnet/Opus, 2,048 for Haiku). */
  minTokens?: number;
  /** How long an entry lives after its last hit (both providers: about 5 minutes). */
  ttlMs?: number;
  /** The clock (tests move it to expire entries). */
  now?: () => number;
}

/** One request as the cache sees it: its blocks in prompt order, and (Anthropic) which of them carry a breakpoint. */
export interface CacheView {
  model: string;
  blocks: string[];
  breakpoints: number[];
  /** OpenAI: the request's `prompt_cache_key`, part of where it is routed (and so of which cache it can read). */
  route?: string;
}

export interface CacheUsage {
  /** Every prompt token of the request. */
  total: number;
  cacheRead: number;
  cacheWrite: number;
  /** The tokens neither read from nor written to the cache. */
  uncached: number;
}

export class TooManyBreakpointsError extends Error {
  override name = 'TooManyBreakpointsError';
}

const tokensOf = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** What the stand-ins remember between requests: prefix digest → expiry, per model. */
export class PromptCache {
  private readonly entries = new Map<string, number>();
  private readonly minTokens: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(opts: PromptCacheOptions = {}) {
    this.minTokens = opts.minTokens ?? 1_024;
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** Anthropic's explicit breakpoints; throws TooManyBreakpointsError past four. */
  anthropic(view: CacheView): CacheUsage {
    if (view.breakpoints.length > ANTHROPIC_MAX_BREAKPOINTS) {
      throw new TooManyBreakpointsError(
        `A maximum of ${ANTHROPIC_MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${view.breakpoints.length}.`,
      );
    }
    const { digests, tokens } = blockPrefixes(view);
    const total = tokens.at(-1) ?? 0;
    let read = 0;
    for (const b of view.breakpoints) {
      for (let i = b; i >= Math.max(0, b - ANTHROPIC_LOOKBACK_BLOCKS); i--) {
        if (!this.hit(digests[i])) continue;
        read = Math.max(read, tokens[i]);
        break;
      }
    }
    let written = read;
    for (const b of view.breakpoints) {
      if (tokens[b] < this.minTokens || tokens[b] <= read) continue;
      this.keep(digests[b]);
      written = Math.max(written, tokens[b]);
    }
    return { total, cacheRead: read, cacheWrite: written - read, uncached: total - written };
  }

  /** OpenAI's automatic prefix caching. */
  openai(view: CacheView): CacheUsage {
    const text = view.blocks.join('');
    const total = tokensOf(text.length);
    if (total < OPENAI_MIN_TOKENS) return { total, cacheRead: 0, cacheWrite: 0, uncached: total };
    const hash = createHash('sha256')
      .update(view.model)
      .update('\0')
      .update(view.route ?? '')
      .update('\0');
    let read = 0;
    let from = 0;
    let missed = false;
    const seen: string[] = [];
    for (let t = OPENAI_MIN_TOKENS; t <= total; t += OPENAI_STEP_TOKENS) {
      const to = Math.min(text.length, t * CHARS_PER_TOKEN);
      hash.update(text.slice(from, to));
      from = to;
      const digest = hash.copy().digest('hex');
      seen.push(digest);
      // A prefix is read whole or not at all: the longest run of hits from the first 1,024 tokens on.
      if (!missed && this.hit(digest)) read = t;
      else missed = true;
    }
    for (const d of seen) this.keep(d);
    return { total, cacheRead: read, cacheWrite: 0, uncached: total - read };
  }

  private hit(digest: string | undefined): boolean {
    if (digest === undefined) return false;
    const expires = this.entries.get(digest);
    if (expires === undefined || expires <= this.now()) return false;
    this.entries.set(digest, this.now() + this.ttlMs);
    return true;
  }

  private keep(digest: string): void {
    this.entries.set(digest, this.now() + this.ttlMs);
  }
}

/** Each block's prefix digest (model-scoped) and the tokens up to and including it. */
function blockPrefixes(view: CacheView): { digests: string[]; tokens: number[] } {
  const hash: Hash = createHash('sha256').update(view.model).update('\0');
  const digests: string[] = [];
  const tokens: number[] = [];
  let chars = 0;
  for (const block of view.blocks) {
    hash.update(block).update('\0');
    chars += block.length;
    digests.push(hash.copy().digest('hex'));
    tokens.push(tokensOf(chars));
  }
  return { digests, tokens };
}

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A block as it is cached: its content without the marker (a breakpoint moved elsewhere keeps the prefix). */
function withoutMarker(block: unknown): string {
  if (!isObject(block)) return JSON.stringify(block);
  const { cache_control: _marker, ...rest } = block;
  return JSON.stringify(rest);
}

/** An Anthropic Messages request as blocks: tools, then system, then each message's content blocks. */
export function anthropicView(body: Body): CacheView {
  const blocks: string[] = [];
  const breakpoints: number[] = [];
  const add = (text: string, marked: boolean): void => {
    if (marked) breakpoints.push(blocks.length);
    blocks.push(text);
  };
  const marked = (b: unknown): boolean => isObject(b) && b.cache_control !== undefined;
  for (const tool of list(body.tools)) add(withoutMarker(tool), marked(tool));
  if (typeof body.system === 'string') add(body.system, false);
  for (const b of list(body.system)) add(withoutMarker(b), marked(b));
  for (const m of list(body.messages)) {
    if (!isObject(m)) continue;
    const role = String(m.role);
    if (typeof m.content === 'string') add(`${role}:${m.content}`, false);
    else for (const [i, b] of list(m.content).entries()) add(`${i === 0 ? `${role}:` : ''}${withoutMarker(b)}`, marked(b));
  }
  return { model: String(body.model), blocks, breakpoints };
}

/** A Chat Completions request as OpenAI caches it: the tools, then the messages in order. */
export function chatCompletionsView(body: Body): CacheView {
  const blocks = [JSON.stringify(body.tools ?? []), ...list(body.messages).map((m) => JSON.stringify(m))];
  return { model: String(body.model), blocks, breakpoints: [], ...routeOf(body) };
}

/** The routing key a request names (OpenAI's `prompt_cache_key`). */
const routeOf = (body: Body): { route?: string } => (typeof body.prompt_cache_key === 'string' ? { route: body.prompt_cache_key } : {});

/** A Responses request: the tools, the instructions, then the input items in order. */
export function responsesView(body: Body): CacheView {
  const input = typeof body.input === 'string' ? [body.input] : list(body.input);
  return {
    model: String(body.model),
    blocks: [JSON.stringify(body.tools ?? []), String(body.instructions ?? ''), ...input.map((m) => JSON.stringify(m))],
    breakpoints: [],
    ...routeOf(body),
  };
}
