import { describe, expect, it } from 'vitest';
import { hostTimeZone, isValidTimeZone, localDate } from './time-zones.js';

describe('time zones', () => {
  it('localDate gives the calendar date in each zone, with one cached formatter per zone', () => {
    const instant = Date.UTC(2026, 10, 30, 23, 30); // 2026-11-30 23:30 UTC
    // Alternate zones on the same instant: a formatter cached for one zone must never answer for another.
    for (let i = 0; i < 3; i++) {
      expect(localDate(instant, 'UTC')).toBe('2026-11-30');
      expect(localDate(instant, 'Asia/Tokyo')).toBe('2026-12-01'); // UTC+9
      expect(localDate(instant, 'America/Los_Angeles')).toBe('2026-11-30'); // UTC-8
      expect(localDate(new Date(instant), 'Pacific/Kiritimati')).toBe('2026-12-01'); // UTC+14
    }
    // The same zone across a local midnight: the cached formatter follows the instant.
    const beforeMidnightBerlin = Date.UTC(2026, 11, 31, 22, 59, 59); // 23:59:59 in Berlin (UTC+1)
    expect(localDate(beforeMidnightBerlin, 'Europe/Berlin')).toBe('2026-12-31');
    expect(localDate(beforeMidnightBerlin + 1_000, 'Europe/Berlin')).toBe('2027-01-01');
    // Daylight saving: 2026-03-29 00:30 UTC is 01:30 CET, still the 29th; the day before 23:30 UTC is 00:30 on the 29th.
    expect(localDate(Date.UTC(2026, 2, 28, 23, 30), 'Europe/Berlin')).toBe('2026-03-29');
    expect(localDate(Date.UTC(2026, 2, 28, 22, 30), 'Europe/Berlin')).toBe('2026-03-28');
  });

  it('a date remembered for its minute is right on both sides of a midnight that falls on an odd offset (+5:45)', () => {
    // Midnight in Kathmandu (UTC+5:45) is 18:15 UTC: the minute before and the minute of it, each asked twice.
    const midnight = Date.UTC(2026, 5, 14, 18, 15);
    for (let i = 0; i < 2; i++) {
      expect(localDate(midnight - 1, 'Asia/Kathmandu')).toBe('2026-06-14');
      expect(localDate(midnight, 'Asia/Kathmandu')).toBe('2026-06-15');
      expect(localDate(midnight + 59_999, 'Asia/Kathmandu')).toBe('2026-06-15');
      expect(localDate(midnight - 1, 'UTC')).toBe('2026-06-14');
    }
  });

  it('an unknown zone is a clear error for localDate and false for isValidTimeZone, asked twice (cached) or not', () => {
    expect(() => localDate(0, 'Mars/Olympus')).toThrow(RangeError);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
    expect(isValidTimeZone('Europe/Paris')).toBe(true);
    expect(isValidTimeZone('Europe/Paris')).toBe(true);
  });

  it('hostTimeZone is a zone Intl knows', () => {
    expect(isValidTimeZone(hostTimeZone())).toBe(true);
    expect(hostTimeZone()).toBe(hostTimeZone());
  });
});
