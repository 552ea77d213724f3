/**
 * Time-zone helpers shared by the loop and the gateway. Building an `Intl.DateTimeFormat` costs far more than using
 * one (tens of microseconds against about one), and several of these run for every message, so formatters are built
 * once per zone and kept.
 */

/**
 * Zones come from configuration and from models (current_time), a handful in practice; the dates asked for are
 * mostly the current one. The cap only keeps misuse (or thousands of distinct instants) from growing a map.
 */
const MAX_CACHED = 1_000;

const dateFormats = new Map<string, Intl.DateTimeFormat>();
const zoneValidity = new Map<string, boolean>();
let hostZone: string | undefined;

function remember<V>(map: Map<string, V>, key: string, value: V): V {
  if (map.size >= MAX_CACHED) map.clear();
  map.set(key, value);
  return value;
}

/**
 * Dates already formatted, by zone and minute: a zone's date only changes on a minute boundary (offsets are whole
 * minutes), and every message asks for the same few (the reset policy, the budget periods), ≈ 5 µs each formatted.
 */
const datesByMinute = new Map<string, string>();

/** `YYYY-MM-DD` of the instant in the zone (the host's zone when none is given); sortable as a string. */
export function localDate(at: number | Date, timeZone?: string): string {
  const key = timeZone ?? '';
  const ms = typeof at === 'number' ? at : at.getTime();
  const memo = `${key}|${Math.floor(ms / 60_000)}`;
  const known = datesByMinute.get(memo);
  if (known !== undefined) return known;
  const format =
    dateFormats.get(key) ??
    // en-CA formats dates as YYYY-MM-DD.
    remember(dateFormats, key, new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }));
  return remember(datesByMinute, memo, format.format(ms));
}

/** Whether Intl knows the zone (an IANA name such as Europe/Berlin, or UTC). */
export function isValidTimeZone(zone: string): boolean {
  const known = zoneValidity.get(zone);
  if (known !== undefined) return known;
  let valid: boolean;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    valid = true;
  } catch {
    valid = false;
  }
  return remember(zoneValidity, zone, valid);
}

/** The host's zone (UTC when Intl does not say), looked up once. */
export function hostTimeZone(): string {
  hostZone ??= Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return hostZone;
}
