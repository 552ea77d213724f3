/**
 * The context window to budget against. The model table (or HERALD_CONTEXT_WINDOW) is a guess about the server;
 * a context-length error that names the limit is the server's word, so it is remembered for that model on that
 * provider (`provider:model`: a local vLLM may serve a model with a smaller window than OpenRouter does) and every
 * later turn budgets against it.
 *
 * What one process learns, every process should know: with a `WindowBook` (the session store's
 * `context_windows` table) a learnt limit is written through, and `refresh()` — the gateway calls it before each
 * turn — reads what the other workers learnt. A limit is trusted for LEARNT_WINDOW_TTL_MS; after that the model
 * table applies again until the server names a limit anew (servers get upgraded).
 *
 * And where in the window to compress (thresholdFor and the gateway's thresholds, at the end). Two layers on purpose
 * (as in Hermes): the loop compresses at a configurable share of the window (default 50 %, using real usage), and the
 * gateway is a safety net at 85 % before a turn starts, for sessions that grew between turns. Equal thresholds would
 * make both fire on every turn.
 */
import { contextWindowFor } from '../providers/models.js';

/** Assumed windows, largest first, for overflow errors that name no limit (a 413 from a proxy, say). */
export const ASSUMED_WINDOW_STEPS: readonly number[] = [128_000, 64_000, 32_000, 16_000, 8_000];

/** How long a limit named by a provider is trusted. */
export const LEARNT_WINDOW_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A provider (its `provider:model` label is the key), or a key string as is. */
export type WindowKey = string | { readonly name: string; readonly model: string };

export interface LearntWindow {
  key: string;
  limit: number;
  learntAt: number;
}

/** Where learnt windows are shared between processes (the session store; store/context-windows.ts). */
export interface WindowBook {
  /** Records a limit; a smaller one already recorded and still fresh is kept. */
  save(window: LearntWindow): Promise<void>;
  /** Every limit learnt since `since` (ms since the epoch). */
  since(since: number): Promise<LearntWindow[]>;
}

export interface ContextWindowsOptions {
  book?: WindowBook;
  /** A write or read of the book failed: the in-process value still applies (the gateway logs it). */
  onBookError?: (err: unknown) => void;
  now?: () => number;
  /**
   * A refresh within this long of the last one reads nothing (a turn refreshes before it starts: without this, one
   * read of the book per message). 0: every refresh reads.
   */
  minRefreshMs?: number;
}

function keyOf(key: WindowKey): string {
  return typeof key === 'string' ? key : `${key.name}:${key.model}`;
}

function modelOf(key: WindowKey): string {
  return typeof key === 'string' ? key : key.model;
}

export class ContextWindows {
  private readonly learnt = new Map<string, { limit: number; learntAt: number }>();
  private readonly now: () => number;
  private lastRefresh = -Infinity;

  constructor(private readonly opts: ContextWindowsOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  /** Remembers the limit a provider named; a smaller later one wins. Written through to the book; never throws. */
  async learn(key: WindowKey, limit: number): Promise<void> {
    if (!Number.isFinite(limit) || limit <= 0) return;
    const k = keyOf(key);
    const known = this.fresh(k);
    const value = Math.floor(known === undefined ? limit : Math.min(known, limit));
    const learntAt = this.now();
    this.learnt.set(k, { limit: value, learntAt });
    await this.opts.book?.save({ key: k, limit: value, learntAt }).catch((err: unknown) => this.opts.onBookError?.(err));
  }

  /** The limit learnt for this model on this provider, while it is fresh. */
  get(key: WindowKey): number | undefined {
    return this.fresh(keyOf(key));
  }

  /** The override (or table) window, lowered to what the provider told us when it told us less. */
  effective(key: WindowKey, override?: number): number {
    const configured = contextWindowFor(modelOf(key), override);
    const known = this.get(key);
    return known === undefined ? configured : Math.min(configured, known);
  }

  /** Takes in what other processes learnt (the book's fresh rows), at most once per `minRefreshMs` unless `force`; never throws. */
  async refresh(force = false): Promise<void> {
    if (!this.opts.book) return;
    const now = this.now();
    if (!force && now - this.lastRefresh < (this.opts.minRefreshMs ?? 0)) return;
    this.lastRefresh = now;
    try {
      for (const w of await this.opts.book.since(this.now() - LEARNT_WINDOW_TTL_MS)) {
        const mine = this.learnt.get(w.key);
        // The book keeps the smallest fresh limit; a newer word from it replaces an older one of ours.
        if (!mine || w.learntAt >= mine.learntAt || w.limit < mine.limit) this.learnt.set(w.key, { limit: w.limit, learntAt: w.learntAt });
      }
    } catch (err) {
      this.opts.onBookError?.(err);
    }
  }

  /** For tests: forget every learnt window (the book keeps its rows). */
  forget(): void {
    this.learnt.clear();
  }

  private fresh(key: string): number | undefined {
    const w = this.learnt.get(key);
    if (!w) return undefined;
    if (this.now() - w.learntAt > LEARNT_WINDOW_TTL_MS) {
      this.learnt.delete(key);
      return undefined;
    }
    return w.limit;
  }
}

/** The process's windows when the caller brings none (a library user, the tests): in memory only. */
export const processContextWindows = new ContextWindows();

export function learnContextWindow(key: WindowKey, limit: number): void {
  void processContextWindows.learn(key, limit);
}

export function learntContextWindow(key: WindowKey): number | undefined {
  return processContextWindows.get(key);
}

/** For tests: forget every learnt window. */
export function forgetLearntContextWindows(): void {
  processContextWindows.forget();
}

/** The override (or table) window, lowered to what the provider told us when it told us less. */
export function effectiveContextWindow(key: WindowKey, override?: number): number {
  return processContextWindows.effective(key, override);
}

/** The next assumed window below `current` (128K → 64K → … → 8K); `current` itself once at the bottom. */
export function stepDownWindow(current: number): number {
  return ASSUMED_WINDOW_STEPS.find((step) => step < current) ?? current;
}

/** The loop's default trigger, as a share of the context window. */
export const DEFAULT_THRESHOLD_RATIO = 0.5;
/** Below 10 % the loop would compress on every call; above 80 % there is no room left to write the summary. */
export const MIN_THRESHOLD_RATIO = 0.1;
export const MAX_THRESHOLD_RATIO = 0.8;
/** The tail kept verbatim may use this share of the threshold. */
export const TAIL_BUDGET_RATIO = 0.2;

export const GATEWAY_THRESHOLD_RATIO = 0.85;
/** Still this full after compressing: the user is told the conversation is nearly out of room. */
export const GATEWAY_WARNING_RATIO = 0.95;

export function clampThresholdRatio(ratio: number): number {
  if (!Number.isFinite(ratio)) return DEFAULT_THRESHOLD_RATIO;
  return Math.min(MAX_THRESHOLD_RATIO, Math.max(MIN_THRESHOLD_RATIO, ratio));
}

/** Tokens at which the loop compresses: `window × ratio`, the ratio clamped to [0.10, 0.80]. */
export function thresholdFor(window: number, ratio: number = DEFAULT_THRESHOLD_RATIO): number {
  return Math.floor(window * clampThresholdRatio(ratio));
}

/** Tokens at which the gateway compresses a session before its next turn. */
export function gatewayThreshold(window: number): number {
  return Math.floor(window * GATEWAY_THRESHOLD_RATIO);
}

export function gatewayWarningThreshold(window: number): number {
  return Math.floor(window * GATEWAY_WARNING_RATIO);
}

/** The share of the threshold the verbatim tail may take. */
export function tailBudgetFor(thresholdTokens: number): number {
  return Math.floor(thresholdTokens * TAIL_BUDGET_RATIO);
}
