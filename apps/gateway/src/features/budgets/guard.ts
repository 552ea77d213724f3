/**
 * Spend caps (HERALD_BUDGETS): which budgets a turn counts against, whether one is used up (the turn is refused
 * with a clear reply; admins are exempt), and the 80 % notice, given once per budget and period whichever worker
 * crosses it. Spend is in the store (spend-store.ts), so every worker sees the same numbers and a restart keeps them.
 *
 * Scopes: `user` is one person (on one platform), across profiles, or within `profile` when the budget names one;
 * `profile` is one profile (the named one, or each profile on its own); `global` is the whole gateway. Periods are
 * calendar days and months in HERALD_TIMEZONE.
 */
import { localDate, type Sql, type SqlWrite, type Usage } from '@herald/agent-core';
import type { Budget } from '../../support/config/profile-schema.js';
import { SpendStore, type SpendRow } from './spend-store.js';

const NOTICE_AT = 0.8;

/** Whose turn it is. */
export interface SpendSubject {
  profile: string;
  platform: string;
  userId: string;
}

type Period = Budget['period'];

/** One budget as it applies to one subject: its scope key and what is spent in the current period. */
export interface BudgetState {
  budget: Budget;
  scope: string;
  period: string;
  spent: SpendRow;
  /** The larger of tokens and money used, as a fraction of the cap (1 = used up). */
  used: number;
}

export interface BudgetGuardOptions {
  budgets: readonly Budget[];
  /** `platform:user_id` of people exempt from the caps. */
  admins: readonly string[];
  timeZone: string;
  now?: () => number;
}

const tokensOf = (u: Usage): number => u.input + u.output + u.cacheRead + u.cacheWrite;

export class BudgetGuard {
  private readonly now: () => number;

  constructor(
    private readonly spend: SpendStore,
    private readonly opts: BudgetGuardOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.opts.budgets.length > 0;
  }

  isAdmin(s: Pick<SpendSubject, 'platform' | 'userId'>): boolean {
    return this.opts.admins.includes(`${s.platform}:${s.userId}`);
  }

  /** The current period's key: `day:2026-11-26` or `month:2026-11` in the configured time zone. */
  periodKey(period: Period, at = this.now()): string {
    const date = localDate(at, this.opts.timeZone);
    return period === 'day' ? `day:${date}` : `month:${date.slice(0, 7)}`;
  }

  /** Every (scope, period) a turn's spend is added to, budget or not, so /usage and the admin API can show it. */
  spendKeys(s: SpendSubject): Array<{ scope: string; period: string }> {
    const day = this.periodKey('day');
    const month = this.periodKey('month');
    const keys: Array<{ scope: string; period: string }> = [];
    for (const scope of ['global', `profile:${s.profile}`, `user:${s.platform}:${s.userId}`, `profile-user:${s.profile}:${s.platform}:${s.userId}`]) {
      keys.push({ scope, period: day }, { scope, period: month });
    }
    return keys;
  }

  /** Adds a turn's tokens and cost (inside the caller's transaction, with the session's usage). */
  async record(s: SpendSubject, usage: Usage, costUsd: number): Promise<void> {
    const tokens = tokensOf(usage);
    if (tokens === 0 && costUsd === 0) return;
    await this.spend.add(this.spendKeys(s), tokens, costUsd);
  }

  /**
   * record's statement, written with the turn's record (turn/stages/record.ts); null when there is nothing to add. It
   * runs before the record's reply is made, so notices() called for that reply reads the spend with this turn's in it.
   */
  recordWrite(s: SpendSubject, usage: Usage, costUsd: number): SqlWrite | null {
    const tokens = tokensOf(usage);
    if (tokens === 0 && costUsd === 0) return null;
    return this.spend.addWrite(this.spendKeys(s), tokens, costUsd);
  }

  /** The budgets that apply to this subject, with what is spent against each. */
  async states(s: SpendSubject): Promise<BudgetState[]> {
    const out: BudgetState[] = [];
    for (const budget of this.opts.budgets) {
      const scope = scopeOf(budget, s);
      if (scope === null) continue;
      const period = this.periodKey(budget.period);
      const spent = await this.spend.get(scope, period);
      out.push({ budget, scope, period, spent, used: usedOf(budget, spent) });
    }
    return out;
  }

  /** A reply refusing the turn when a budget is used up (never for admins); null when the turn may run. */
  async refusal(s: SpendSubject): Promise<string | null> {
    if (!this.enabled || this.isAdmin(s)) return null;
    const over = (await this.states(s)).find((b) => b.used >= 1);
    if (!over) return null;
    return `⛔ ${capitalise(describe(over.budget, s))} is used up (${amounts(over)}). Nothing more runs until it resets ${this.resetsIn(over.budget.period)}; an admin can reset it sooner.`;
  }

  /**
   * After a turn's spend is recorded: the 80 % notices this turn crossed, each given once per budget and period
   * (the store's `warned_at` decides which worker gives it). Joins the caller's transaction.
   */
  async notices(s: SpendSubject): Promise<string[]> {
    if (!this.enabled) return [];
    const out: string[] = [];
    for (const state of await this.states(s)) {
      if (state.used < NOTICE_AT || state.spent.warned) continue;
      if (!(await this.spend.markWarned(state.scope, state.period))) continue;
      out.push(`⚠️ ${capitalise(describe(state.budget, s))} is ${percentOf(state.used)} % used (${amounts(state)}).`);
    }
    return out;
  }

  /** Lines for /usage: the person's spend today and this month, and each budget that applies with what is left. */
  async usageLines(s: SpendSubject): Promise<string[]> {
    const day = await this.spend.get(`user:${s.platform}:${s.userId}`, this.periodKey('day'));
    const month = await this.spend.get(`user:${s.platform}:${s.userId}`, this.periodKey('month'));
    const lines = [`Your spend: today $${usd(day.costUsd)} · ${fmt(day.tokens)} tokens; this month $${usd(month.costUsd)} · ${fmt(month.tokens)} tokens`];
    for (const state of await this.states(s)) {
      const { budget } = state;
      const left = [
        ...(budget.usd !== undefined ? [`$${usd(Math.max(budget.usd - state.spent.costUsd, 0))} of $${usd(budget.usd)}`] : []),
        ...(budget.tokens !== undefined ? [`${fmt(Math.max(budget.tokens - state.spent.tokens, 0))} of ${fmt(budget.tokens)} tokens`] : []),
      ].join(' and ');
      lines.push(`${capitalise(describe(budget, s))}: ${left} left (${percentOf(state.used)} % used)`);
    }
    if (this.isAdmin(s) && this.enabled) lines.push('You are an admin: budgets do not stop your turns.');
    return lines;
  }

  get budgets(): readonly Budget[] {
    return this.opts.budgets;
  }

  /** Today's and this month's spend rows (scopes starting with `scopePrefix`), most spent first. */
  spendNow(scopePrefix = ''): Promise<SpendRow[]> {
    return this.spend.list([this.periodKey('day'), this.periodKey('month')], scopePrefix);
  }

  /** Forgets a scope's spend in the current day, month or both (the 80 % notice may then be given again). */
  reset(scope: string, period?: Period): Promise<number> {
    return this.spend.reset(scope, period ? [this.periodKey(period)] : [this.periodKey('day'), this.periodKey('month')]);
  }

  private resetsIn(period: Period): string {
    return period === 'day' ? 'tomorrow' : 'next month';
  }
}

/** The guard on a store's spend table, with the budgets, admins and time zone of the config. */
export function budgetGuardFor(config: { budgets: readonly Budget[]; adminUsers: readonly string[]; timezone: string }, sql: Sql): BudgetGuard {
  return new BudgetGuard(new SpendStore(sql), { budgets: config.budgets, admins: config.adminUsers, timeZone: config.timezone });
}

/** The scope key a budget counts this subject under, or null when the budget does not apply to it. */
function scopeOf(b: Budget, s: SpendSubject): string | null {
  if (b.profile !== undefined && b.profile !== s.profile) return null;
  if (b.scope === 'global') return 'global';
  if (b.scope === 'profile') return `profile:${s.profile}`;
  return b.profile !== undefined ? `profile-user:${s.profile}:${s.platform}:${s.userId}` : `user:${s.platform}:${s.userId}`;
}

function usedOf(b: Budget, spent: Pick<SpendRow, 'tokens' | 'costUsd'>): number {
  return Math.max(b.usd !== undefined ? spent.costUsd / b.usd : 0, b.tokens !== undefined ? spent.tokens / b.tokens : 0);
}

function describe(b: Budget, s: SpendSubject): string {
  const period = b.period === 'day' ? 'daily' : 'monthly';
  if (b.scope === 'user') return `your ${period} budget${b.profile ? ` for ${s.profile}` : ''}`;
  if (b.scope === 'profile') return `the ${period} budget of ${s.profile}`;
  return `the team's ${period} budget`;
}

function amounts(state: BudgetState): string {
  const { budget, spent } = state;
  return [
    ...(budget.usd !== undefined ? [`$${usd(spent.costUsd)} of $${usd(budget.usd)}`] : []),
    ...(budget.tokens !== undefined ? [`${fmt(spent.tokens)} of ${fmt(budget.tokens)} tokens`] : []),
  ].join(', ');
}

/**
 * Whole percent used, past 100 when one turn overshot the budget (45 of 40 tokens is 112 %, not 100); a hair of
 * float error (0.3 × 3 = 0.8999…) does not round 90 % down.
 */
const percentOf = (used: number): number => Math.floor(used * 100 + 1e-9);
const usd = (n: number): string => (n === 0 || n >= 0.01 ? n.toFixed(2) : n.toFixed(4));
const fmt = (n: number): string => n.toLocaleString('en-US');
const capitalise = (t: string): string => t.charAt(0).toUpperCase() + t.slice(1);
