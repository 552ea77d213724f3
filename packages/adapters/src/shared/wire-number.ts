/**
 * A number from a platform's JSON: a number, or a string that reads as one; anything else NaN. `Number()` of an
 * object from the wire can throw (`{"toString": 0}` has no callable toString), which would fail the whole update.
 */
export const wireNumber = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN);
