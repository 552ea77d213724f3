/** Reading a platform's JSON: each reader gives the value of the expected type, or nothing, and never throws. */
import { describe, expect, it } from 'vitest';
import { isRecord, stringAt, wireNumber, wireString } from './wire-values.js';

const odd: unknown[] = [null, undefined, true, 0, Number.NaN, '', [], ['a'], { toString: 0 }, () => 'x', Symbol('s'), 10n];

describe('wire values', () => {
  it('isRecord: objects only, not arrays or null', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1 })).toBe(true);
    expect(odd.filter(isRecord)).toEqual([{ toString: 0 }]);
  });

  it('wireString and stringAt: a string with something in it', () => {
    expect(wireString('x')).toBe('x');
    expect(wireString(' ')).toBe(' ');
    expect(odd.map(wireString).filter((v) => v !== undefined)).toEqual([]);
    expect(stringAt({ id: 'U1', n: 1, e: '' }, 'id')).toBe('U1');
    expect(stringAt({ id: 'U1', n: 1, e: '' }, 'n')).toBeUndefined();
    expect(stringAt({ id: 'U1', n: 1, e: '' }, 'e')).toBeUndefined();
    expect(stringAt(undefined, 'id')).toBeUndefined();
  });

  it('wireNumber: a number or a string that reads as one; anything else NaN, never a throw', () => {
    expect(wireNumber(42)).toBe(42);
    expect(wireNumber('51.5')).toBe(51.5);
    expect(wireNumber('north')).toBeNaN();
    for (const v of [null, undefined, true, [], { toString: 0 }, Symbol('s'), 10n]) expect(wireNumber(v)).toBeNaN();
  });
});
