import { describe, expect, it } from 'vitest';
import { RecentIds } from './recent-ids.js';

describe('RecentIds', () => {
  it('reports a repeated id as a duplicate', () => {
    const seen = new RecentIds(10);
    expect(seen.add('a')).toBe(true);
    expect(seen.add('b')).toBe(true);
    expect(seen.add('a')).toBe(false);
  });

  it('stays bounded, forgetting the least recently seen id first', () => {
    const seen = new RecentIds(3);
    seen.add('1');
    seen.add('2');
    seen.add('3');
    seen.add('1'); // refreshes 1, so 2 is now the oldest
    seen.add('4');
    expect(seen.size).toBe(3);
    expect(seen.add('1')).toBe(false);
    expect(seen.add('2')).toBe(true);
  });

  it('takes an id again after it was deleted', () => {
    const seen = new RecentIds(3);
    seen.add('x');
    seen.delete('x');
    expect(seen.add('x')).toBe(true);
  });

  it('refuses a useless capacity', () => {
    expect(() => new RecentIds(0)).toThrow(RangeError);
  });
});
