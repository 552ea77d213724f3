/**
 * When a scheduled task runs, worked out against a clock the caller passes in (so tests control time):
 *   - cron: five fields (minute hour day-of-month month day-of-week), read in the task's IANA time zone by
 *     cron-parser, the same library and version BullMQ's job schedulers use, so what Herald shows is what runs;
 *   - at: a local date and time in the task's time zone (`2026-11-26T09:00`), or an ISO time with its own offset;
 *   - in_minutes: that long from now.
 * Every problem is a ScheduleInputError whose message the model (or the user) can act on.
 */
import { CronExpressionParser } from 'cron-parser';
import { DateTime } from 'luxon';

export class ScheduleInputError extends Error {
  override name = 'ScheduleInputError';
}

export type ScheduleWhen = { kind: 'cron'; cron: string } | { kind: 'once'; runAt: number };

/** How far ahead a one-off may be set. */
const MAX_AHEAD_MS = 5 * 366 * 24 * 3600_000;

export function isTimeZone(zone: string): boolean {
  return DateTime.now().setZone(zone).isValid;
}

function checkZone(zone: string): void {
  if (!isTimeZone(zone)) throw new ScheduleInputError(`unknown time zone "${zone}": use an IANA name such as Europe/Berlin or America/New_York`);
}

/** The next `count` run times of a cron expression after `from`, in ms. */
export function nextCronRuns(cron: string, timeZone: string, from: number, count = 1): number[] {
  checkZone(timeZone);
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw new ScheduleInputError(`cron must have 5 fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1" for Mondays at 09:00; got "${cron}"`);
  }
  let expression: ReturnType<typeof CronExpressionParser.parse>;
  try {
    expression = CronExpressionParser.parse(fields.join(' '), { currentDate: from, tz: timeZone });
  } catch (err) {
    throw new ScheduleInputError(`invalid cron "${cron}": ${err instanceof Error ? err.message : String(err)}`);
  }
  const runs: number[] = [];
  try {
    for (let i = 0; i < count && expression.hasNext(); i++) runs.push(expression.next().getTime());
  } catch {
    // cron-parser gives up on an expression that never matches (31 February).
  }
  if (runs.length === 0) throw new ScheduleInputError(`cron "${cron}" never runs`);
  return runs;
}

/** `at` (local time in `timeZone`, or ISO with an offset) as ms; must lie in the future of `now`. */
export function parseAt(at: string, timeZone: string, now: number): number {
  checkZone(timeZone);
  const parsed = DateTime.fromISO(at.trim(), { zone: timeZone });
  if (!parsed.isValid) {
    throw new ScheduleInputError(`"${at}" is not a date and time: use the form 2026-11-26T09:00 (local time in ${timeZone}) or an ISO time with an offset`);
  }
  return inFuture(parsed.toMillis(), now, `${at} (${timeZone})`);
}

function afterMinutes(minutes: number, now: number): number {
  if (!Number.isFinite(minutes) || minutes <= 0) throw new ScheduleInputError('in_minutes must be a number above 0');
  return inFuture(now + Math.round(minutes * 60_000), now, `in ${minutes} minutes`);
}

function inFuture(at: number, now: number, what: string): number {
  if (at <= now) throw new ScheduleInputError(`${what} is in the past (it is now ${DateTime.fromMillis(now, { zone: 'utc' }).toISO()})`);
  if (at - now > MAX_AHEAD_MS) throw new ScheduleInputError(`${what} is more than 5 years ahead`);
  return at;
}

/** What the user asked for, as one of the two kinds; exactly one of cron, at and in_minutes must be given. */
export function resolveWhen(input: { cron?: string; at?: string; inMinutes?: number }, timeZone: string, now: number): ScheduleWhen {
  const given = [input.cron, input.at, input.inMinutes].filter((v) => v !== undefined && v !== '').length;
  if (given !== 1) throw new ScheduleInputError('give exactly one of cron (repeating), at (a date and time) or in_minutes (from now)');
  if (input.cron !== undefined && input.cron !== '') {
    nextCronRuns(input.cron, timeZone, now);
    return { kind: 'cron', cron: input.cron.trim().split(/\s+/).join(' ') };
  }
  if (input.at !== undefined && input.at !== '') return { kind: 'once', runAt: parseAt(input.at, timeZone, now) };
  return { kind: 'once', runAt: afterMinutes(input.inMinutes as number, now) };
}

/** `Mon 1 Dec 2026, 09:00 (Europe/Berlin)` */
export function formatTime(ms: number, timeZone: string): string {
  return `${DateTime.fromMillis(ms, { zone: timeZone }).toFormat('ccc d LLL yyyy, HH:mm')} (${timeZone})`;
}

/** `every "0 9 * * 1"` or `once`, for lists and the task's own framing. */
export function describeWhen(when: ScheduleWhen, timeZone: string): string {
  return when.kind === 'cron' ? `repeats: cron "${when.cron}" in ${timeZone}` : `once, at ${formatTime(when.runAt, timeZone)}`;
}
