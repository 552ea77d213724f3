import { describe, expect, it } from 'vitest';
import { createCurrentTimeTool } from './current-time.js';

const signal = new AbortController().signal;
// 2025-01-02T14:04:05Z: winter, so Berlin is UTC+1 and New York UTC-5.
const now = () => new Date(Date.UTC(2025, 0, 2, 14, 4, 5));

describe('current_time tool', () => {
  it('tells the time in the configured zone, or in the zone the model asks for', async () => {
    const tool = createCurrentTimeTool({ timeZone: 'Europe/Berlin', now });
    expect(await tool.execute({}, { signal })).toBe(
      'Thursday, 2025-01-02 15:04:05 in Europe/Berlin (UTC+01:00). ISO 8601: 2025-01-02T15:04:05+01:00. Unix time: 1735826645.',
    );
    expect(await tool.execute({ timezone: 'America/New_York' }, { signal })).toMatch(/^Thursday, 2025-01-02 09:04:05 in America\/New_York \(UTC-05:00\)/);
    expect(await tool.execute({ timezone: 'Asia/Kolkata' }, { signal })).toContain('T19:34:05+05:30');
    expect(await tool.execute({ timezone: 'UTC' }, { signal })).toContain('T14:04:05+00:00');
  });

  it('refuses an unknown zone, and is unavailable when configured with one', async () => {
    const tool = createCurrentTimeTool({ timeZone: 'UTC', now });
    await expect(tool.execute({ timezone: 'Mars/Olympus' }, { signal })).rejects.toThrow(/"Mars\/Olympus" is not an IANA time zone/);
    expect(createCurrentTimeTool({ timeZone: 'Nowhere/Land' }).requires?.()).toBe('unknown time zone "Nowhere/Land"');
  });
});
