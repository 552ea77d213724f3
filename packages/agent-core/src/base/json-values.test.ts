import { describe, expect, it } from 'vitest';
import { isRecord, recordOr } from './json-values.js';

const notRecords: unknown[] = [null, undefined, true, 0, Number.NaN, '', 'text', 10n, Symbol('s'), () => ({}), [], [{ a: 1 }]];

describe('isRecord', () => {
  it('takes objects, whatever their prototype', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1, b: [2] })).toBe(true);
    expect(isRecord(JSON.parse('{"toString": 0}'))).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    expect(isRecord(new Error('boom'))).toBe(true);
    expect(isRecord(new Map())).toBe(true);
  });

  it('refuses null, arrays, functions and primitives', () => {
    expect(notRecords.filter(isRecord)).toEqual([]);
  });
});

describe('recordOr', () => {
  it('gives the object itself, or a new empty one', () => {
    const obj = { a: 1 };
    expect(recordOr(obj)).toBe(obj);
    for (const v of notRecords) expect(recordOr(v)).toEqual({});
    // Not one shared object: a caller may fill in what it got.
    expect(recordOr(null)).not.toBe(recordOr(null));
  });
});
