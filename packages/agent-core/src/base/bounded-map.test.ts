import { describe, expect, it } from 'vitest';
import { setBounded } from './bounded-map.js';

describe('setBounded', () => {
  it('keeps at most max entries, dropping the oldest set', () => {
    const map = new Map<string, number>();
    for (let i = 0; i < 5; i++) expect(setBounded(map, `k${i}`, i, 3)).toBe(i);
    expect([...map]).toEqual([
      ['k2', 2],
      ['k3', 3],
      ['k4', 4],
    ]);
    // Setting a key already there drops nothing.
    setBounded(map, 'k3', 30, 3);
    expect([...map.keys()]).toEqual(['k2', 'k3', 'k4']);
    expect(map.get('k3')).toBe(30);
  });
});
