/**
 * How many model calls a turn may make, and the notes that tell the model it is running out of room.
 *
 * The budget: one object is shared between a turn and the subagents it starts, so delegating work does not
 * multiply the budget; a subagent draws from a child budget, which also caps the subagent on its own
 * (`child(max)`), so one runaway child cannot spend the whole turn.
 *
 * The pressure notes, as Hermes has them: past 70 % of the iteration budget a budget note (past 90 % a warning),
 * and past 70 % of the context window a context note. They ride on the last tool result of the next request only
 * (Transcript.setNotes) and are never persisted, so the history stays clean and the prompt cache is not disturbed
 * for later turns.
 */

export const DEFAULT_MAX_ITERATIONS = 90;

export class IterationBudget {
  readonly max: number;
  private used = 0;

  constructor(
    max: number = DEFAULT_MAX_ITERATIONS,
    private readonly parent?: IterationBudget,
  ) {
    if (!Number.isInteger(max) || max < 0) throw new Error(`iteration budget must be a whole number >= 0, got ${max}`);
    this.max = max;
  }

  /** A budget of at most `max` iterations that also spends this one's. */
  child(max: number): IterationBudget {
    return new IterationBudget(max, this);
  }

  /** Takes one iteration (from the parent too); false (and nothing taken) when none are left. */
  consume(): boolean {
    if (this.used >= this.max) return false;
    if (this.parent && !this.parent.consume()) return false;
    this.used += 1;
    return true;
  }

  get remaining(): number {
    const own = this.max - this.used;
    return this.parent ? Math.min(own, this.parent.remaining) : own;
  }

  get consumed(): number {
    return this.used;
  }
}

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
