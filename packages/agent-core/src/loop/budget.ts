/**
 * How many model calls a turn may make. One object is shared between a turn and the subagents it starts, so
 * delegating work does not multiply the budget.
 */

export const DEFAULT_MAX_ITERATIONS = 90;

export class IterationBudget {
  readonly max: number;
  private used = 0;

  constructor(max: number = DEFAULT_MAX_ITERATIONS) {
    if (!Number.isInteger(max) || max < 0) throw new Error(`iteration budget must be a whole number >= 0, got ${max}`);
    this.max = max;
  }

  /** Takes one iteration; false (and nothing taken) when none are left. */
  consume(): boolean {
    if (this.used >= this.max) return false;
    this.used += 1;
    return true;
  }

  get remaining(): number {
    return this.max - this.used;
  }

  get consumed(): number {
    return this.used;
  }
}
