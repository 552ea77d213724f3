/** When tasks run, against a clock the test sets: cron in a time zone (across DST), local times, bad input. */
import { describe, expect, it } from 'vitest';
import { ScheduleInputError, describeWhen, formatTime, nextCronRuns, parseAt, resolveWhen } from './timing.js';

const iso = (ms: number): string => new Date(ms).toISOString();
/** Wednesday 25 March 2026, 12:00 UTC: the Sunday after is the end of CET in Europe/Berlin. */
const NOW = Date.UTC(2026, 2, 25, 12, 0);

describe('nextCronRuns', () => {
  it("reads the expression in the task's time zone, and keeps local time across the DST change", () => {
    // Mondays 09:00 in Berlin: 08:00 UTC in winter time, 07:00 UTC after the clocks go forward on 29 March.
    expect(nextCronRuns('0 9 * * 1', 'Europe/Berlin', NOW, 2).map(iso)).toEqual(['2026-03-30T07:00:00.000Z', '2026-04-06T07:00:00.000Z']);
    expect(nextCronRuns('0 9 * * 1', 'UTC', NOW, 1).map(iso)).toEqual(['2026-03-30T09:00:00.000Z']);
    // Every day at 02:30 Berlin: that hour does not exist on 29 March; the runs go on either side of it.
    const around = nextCronRuns('30 2 * * *', 'Europe/Berlin', NOW, 6).map(iso);
    expect(around[0]).toBe('2026-03-26T01:30:00.000Z');
    expect(around.at(-1)).toBe('2026-03-31T00:30:00.000Z');
  });

  it('follows the clock it is given', () => {
    const later = NOW + 8 * 24 * 3600_000;
    expect(nextCronRuns('0 9 * * 1', 'Europe/Berlin', later, 1).map(iso)).toEqual(['2026-04-06T07:00:00.000Z']);
  });

  it('refuses anything but five fields, nonsense, and expressions that never run, saying why', () => {
    expect(() => nextCronRuns('0 0 9 * * 1', 'UTC', NOW)).toThrow(/cron must have 5 fields/);
    expect(() => nextCronRuns('every monday', 'UTC', NOW)).toThrow(ScheduleInputError);
    expect(() => nextCronRuns('61 9 * * *', 'UTC', NOW)).toThrow(/invalid cron "61 9 \* \* \*"/);
    expect(() => nextCronRuns('0 9 31 2 *', 'UTC', NOW)).toThrow(ScheduleInputError);
    expect(() => nextCronRuns('0 9 * * 1', 'Mars/Olympus', NOW)).toThrow(/unknown time zone "Mars\/Olympus"/);
  });
});

describe('parseAt and resolveWhen', () => {
  it("reads a local date and time in the task's zone, or honours an explicit offset", () => {
    expect(iso(parseAt('2026-03-26T09:00', 'Europe/Berlin', NOW))).toBe('2026-03-26T08:00:00.000Z');
    expect(iso(parseAt('2026-04-02T09:00', 'Europe/Berlin', NOW))).toBe('2026-04-02T07:00:00.000Z');
    expect(iso(parseAt('2026-03-26T09:00:00-05:00', 'Europe/Berlin', NOW))).toBe('2026-03-26T14:00:00.000Z');
    expect(iso(parseAt('2026-03-26T09:00Z', 'Asia/Tokyo', NOW))).toBe('2026-03-26T09:00:00.000Z');
  });

  it('refuses the past, the far future and what is not a time', () => {
    expect(() => parseAt('2026-03-25T12:59', 'Europe/Berlin', NOW)).toThrow(/is in the past \(it is now 2026-03-25T12:00:00.000Z\)/);
    expect(() => parseAt('2040-01-01T00:00', 'UTC', NOW)).toThrow(/more than 5 years ahead/);
    expect(() => parseAt('tomorrow at nine', 'UTC', NOW)).toThrow(/is not a date and time: use the form 2026-11-26T09:00/);
  });

  it('takes exactly one of cron, at and in_minutes', () => {
    expect(resolveWhen({ inMinutes: 90 }, 'UTC', NOW)).toEqual({ kind: 'once', runAt: NOW + 90 * 60_000 });
    expect(resolveWhen({ cron: ' 0  9 * * 1-5 ' }, 'UTC', NOW)).toEqual({ kind: 'cron', cron: '0 9 * * 1-5' });
    expect(resolveWhen({ at: '2026-03-26T09:00' }, 'UTC', NOW)).toEqual({ kind: 'once', runAt: Date.UTC(2026, 2, 26, 9) });
    expect(() => resolveWhen({}, 'UTC', NOW)).toThrow(/give exactly one of cron/);
    expect(() => resolveWhen({ cron: '0 9 * * 1', inMinutes: 5 }, 'UTC', NOW)).toThrow(/give exactly one of cron/);
    expect(() => resolveWhen({ inMinutes: 0 }, 'UTC', NOW)).toThrow(/in_minutes must be a number above 0/);
    expect(() => resolveWhen({ inMinutes: Number.NaN }, 'UTC', NOW)).toThrow(/in_minutes must be a number above 0/);
  });
});

it("describes a task and its times in the task's zone", () => {
  expect(formatTime(Date.UTC(2026, 2, 30, 7), 'Europe/Berlin')).toBe('Mon 30 Mar 2026, 09:00 (Europe/Berlin)');
  expect(describeWhen({ kind: 'cron', cron: '0 9 * * 1' }, 'Europe/Berlin')).toBe('repeats: cron "0 9 * * 1" in Europe/Berlin');
  expect(describeWhen({ kind: 'once', runAt: Date.UTC(2026, 2, 26, 8) }, 'Europe/Berlin')).toBe('once, at Thu 26 Mar 2026, 09:00 (Europe/Berlin)');
});
