/**
 * The context window to budget against. The model table (or HERALD_CONTEXT_WINDOW) is a guess about the server;
 * a context-length error that names the limit is the server's word, so it is remembered for the model for the
 * life of the process and every later turn budgets against it.
 */
import { contextWindowFor } from '../providers/models.js';

/** Assumed windows, largest first, for overflow errors that name no limit (a 413 from a proxy, say). */
export const ASSUMED_WINDOW_STEPS: readonly number[] = [128_000, 64_000, 32_000, 16_000, 8_000];

const learnt = new Map<string, number>();

/** Remembers the limit a provider named for `model`; a smaller later one wins. */
export function learnContextWindow(model: string, limit: number): void {
  if (!Number.isFinite(limit) || limit <= 0) return;
  const known = learnt.get(model);
  learnt.set(model, Math.floor(known === undefined ? limit : Math.min(known, limit)));
}

export function learntContextWindow(model: string): number | undefined {
  return learnt.get(model);
}

/** For tests: forget every learnt window. */
export function forgetLearntContextWindows(): void {
  learnt.clear();
}

/** The override (or table) window, lowered to what the provider told us when it told us less. */
export function effectiveContextWindow(model: string, override?: number): number {
  const configured = contextWindowFor(model, override);
  const known = learnt.get(model);
  return known === undefined ? configured : Math.min(configured, known);
}

/** The next assumed window below `current` (128K → 64K → … → 8K); `current` itself once at the bottom. */
export function stepDownWindow(current: number): number {
  return ASSUMED_WINDOW_STEPS.find((step) => step < current) ?? current;
}
