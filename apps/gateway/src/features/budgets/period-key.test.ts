/** Budget periods are calendar days and months in the configured zone (formatters are cached per zone). */
import { describe, expect, it } from 'vitest';
import { useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { BudgetGuard } from './guard.js';
import { SpendStore } from './spend-store.js';

describe('BudgetGuard.periodKey', () => {
  const temp = useTempStores('sqlite');

  it("follows each guard's own zone across day and month boundaries", async () => {
    const spend = new SpendStore((await temp.open()).sql);
    let at = Date.UTC(2026, 10, 30, 14, 59, 59); // 23:59:59 in Tokyo, 06:59:59 in Los Angeles
    const guard = (timeZone: string) => new BudgetGuard(spend, { budgets: [], admins: [], timeZone, now: () => at });
    const tokyo = guard('Asia/Tokyo');
    const la = guard('America/Los_Angeles');
    const keys = (g: BudgetGuard) => [g.periodKey('day'), g.periodKey('month')];
    expect(keys(tokyo)).toEqual(['day:2026-11-30', 'month:2026-11']);
    expect(keys(la)).toEqual(['day:2026-11-30', 'month:2026-11']);
    at += 1_000; // midnight in Tokyo: a new day and a new month there, not in Los Angeles
    expect(keys(tokyo)).toEqual(['day:2026-12-01', 'month:2026-12']);
    expect(keys(la)).toEqual(['day:2026-11-30', 'month:2026-11']);
    at = Date.UTC(2027, 0, 1, 7, 59, 59); // 23:59:59 on New Year's Eve in Los Angeles
    expect(keys(la)).toEqual(['day:2026-12-31', 'month:2026-12']);
    expect(keys(tokyo)).toEqual(['day:2027-01-01', 'month:2027-01']);
    at += 1_000;
    expect(keys(la)).toEqual(['day:2027-01-01', 'month:2027-01']);
    // An explicit instant wins over the clock.
    expect(tokyo.periodKey('day', Date.UTC(2026, 1, 28, 15))).toBe('day:2026-03-01');
  });
});
