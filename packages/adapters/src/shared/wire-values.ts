/**
 * Values read from a platform's JSON (an update, a webhook, an API answer), where any field may hold anything: each
 * reader gives the value when it has the expected type and undefined (or NaN) otherwise, and never throws.
 */

/** A JSON object. */
export type Json = Record<string, unknown>;

/** An object (not an array, not null). */
export const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string with something in it; anything else (an empty string too) undefined. */
export const wireString = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** `obj[key]` as wireString reads it. */
export const stringAt = (obj: Json | undefined, key: string): string | undefined => wireString(obj?.[key]);

/**
 * A number: a number, or a string that reads as one; anything else NaN. `Number()` of an object from the wire can
 * throw (`{"toString": 0}` has no callable toString), which would fail the whole update.
 */
export const wireNumber = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN);
