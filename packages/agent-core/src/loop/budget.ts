/**
 * How many model calls a turn may make. One object is shared between a turn and the subagents it starts, so
 * delegating work does not multiply the budget; a subagent draws from a child budget, which also caps the
 * subagent on its own (`child(max)`), so one runaway child cannot spend the whole turn.
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
