import { describe, expect, it } from 'vitest';
import { whereOf } from './sql.js';

describe('whereOf', () => {
  it('joins the filters that have a value, parameters in the same order', () => {
    expect(
      whereOf([
        ['a = ?', 'x'],
        ['b = ?', undefined],
        ['c < ?', 0],
      ]),
    ).toEqual({ where: 'WHERE a = ? AND c < ?', params: ['x', 0] });
  });
  it('is empty when no filter has a value; null is a value', () => {
    expect(whereOf([['a = ?', undefined]])).toEqual({ where: '', params: [] });
    expect(whereOf([['a IS ?', null]])).toEqual({ where: 'WHERE a IS ?', params: [null] });
  });
});
