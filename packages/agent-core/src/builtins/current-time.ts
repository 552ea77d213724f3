/**
 * The `current_time` tool: the date and time now, in the configured zone (HERALD_TIMEZONE) or an IANA zone the
 * model names. Models do not know today's date; this is how they find out.
 */
import type { Tool } from '../tools/registry.js';
import { hostTimeZone, isValidTimeZone } from '../base/time-zones.js';
import { ToolInputError, optionalStringArg } from './context.js';

export const CURRENT_TIME_TOOL = 'current_time';

/** `+02:00` style offset of `zone` at `date`. */
function utcOffset(date: Date, zone: string): string {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
    .formatToParts(date)
    .find((p) => p.type === 'timeZoneName')?.value;
  // 'GMT' alone means a zero offset; otherwise 'GMT+05:30'.
  return !name || name === 'GMT' ? '+00:00' : name.replace('GMT', '');
}

/** The local wall-clock fields of `date` in `zone`. */
function wallClock(date: Date, zone: string): Record<string, string> {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    weekday: 'long',
  }).formatToParts(date);
  return Object.fromEntries(parts.map((p) => [p.type, p.value]));
}

/** e.g. `Thursday, 2025-01-02 15:04:05 in Europe/Berlin (UTC+01:00); ISO 8601: 2025-01-02T15:04:05+01:00; ...` */
export function describeTime(date: Date, zone: string): string {
  const f = wallClock(date, zone);
  const offset = utcOffset(date, zone);
  const local = `${f.year}-${f.month}-${f.day} ${f.hour}:${f.minute}:${f.second}`;
  return (
    `${f.weekday}, ${local} in ${zone} (UTC${offset}). ` +
    `ISO 8601: ${f.year}-${f.month}-${f.day}T${f.hour}:${f.minute}:${f.second}${offset}. ` +
    `Unix time: ${Math.floor(date.getTime() / 1000)}.`
  );
}

export function createCurrentTimeTool(opts: { timeZone?: string; now?: () => Date } = {}): Tool {
  const fallbackZone = opts.timeZone ?? hostTimeZone();
  const now = opts.now ?? (() => new Date());
  return {
    name: CURRENT_TIME_TOOL,
    description:
      `The current date and time. Default time zone: ${fallbackZone}; pass "timezone" (an IANA name such as ` + 'America/New_York or Asia/Tokyo) for another.',
    parameters: {
      type: 'object',
      properties: { timezone: { type: 'string', description: 'IANA time zone name (optional)' } },
    },
    readOnly: true,
    // Checked once, here: a zone's validity never changes, so a valid one leaves nothing to check per turn.
    ...(isValidTimeZone(fallbackZone) ? {} : { requires: () => `unknown time zone "${fallbackZone}"` }),
    async execute(args) {
      const zone = optionalStringArg(args, 'timezone')?.trim() ?? fallbackZone;
      if (!isValidTimeZone(zone)) throw new ToolInputError(`"${zone}" is not an IANA time zone name (for example Europe/Paris)`);
      return describeTime(now(), zone);
    },
  };
}
