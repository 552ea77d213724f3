/**
 * Notes that tell the model it is running out of room, as Hermes does: past 70 % of the iteration budget a
 * budget note (past 90 % a warning), and past 70 % of the context window a context note. They ride on the last
 * tool result of the next request only (Transcript.setNotes) and are never persisted, so the history stays clean
 * and the prompt cache is not disturbed for later turns.
 */
import type { IterationBudget } from './budget.js';

const BUDGET_CAUTION_RATIO = 0.7;
const BUDGET_WARNING_RATIO = 0.9;
const CONTEXT_PRESSURE_RATIO = 0.7;

/** The iteration note for the call about to be made (the budget already counts it), or undefined below 70 %. */
export function budgetNote(budget: IterationBudget): string | undefined {
  if (budget.max === 0) return undefined;
  const used = budget.consumed;
  const left = budget.remaining;
  const ratio = 1 - left / Math.max(1, used + left);
  if (ratio >= BUDGET_WARNING_RATIO) {
    return `[BUDGET WARNING: Iteration ${used}/${used + left}. Only ${left} iteration(s) left. Provide your final response NOW.]`;
  }
  if (ratio >= BUDGET_CAUTION_RATIO) {
    return `[BUDGET: Iteration ${used}/${used + left}. ${left} iterations left. Start consolidating your work.]`;
  }
  return undefined;
}

/** The context note when the last prompt filled 70 % of the window or more; undefined otherwise. */
export function contextNote(promptTokens: number | undefined, window: number): string | undefined {
  if (promptTokens === undefined || window <= 0) return undefined;
  const ratio = promptTokens / window;
  if (ratio < CONTEXT_PRESSURE_RATIO) return undefined;
  const percent = Math.min(100, Math.round(ratio * 100));
  return `[CONTEXT: ${percent}% of the context window is used (${promptTokens}/${window} tokens). Keep tool output small and wrap up soon.]`;
}
