import { describe, expect, it } from 'vitest';
import { changesRows, whereOf } from './sql.js';

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

describe('changesRows', () => {
  it('is true for a statement that changes rows, a PostgreSQL CTE that does included, and for nothing else', () => {
    const writes = [
      'INSERT INTO t (n) VALUES (?) ON CONFLICT (n) DO UPDATE SET n = excluded.n RETURNING n',
      '  update "sessions" AS t SET x = v.x FROM (VALUES (?)) AS v(x)',
      'DELETE FROM t WHERE n = ?',
      'REPLACE INTO t (n) VALUES (?)',
      'WITH t AS (UPDATE turns SET status = ? WHERE id = ? RETURNING *) SELECT * FROM t',
      'WITH l AS (SELECT 1), k AS (INSERT INTO session_keys (key) VALUES (?)) SELECT * FROM l',
    ];
    const others = [
      'SELECT * FROM turns WHERE id = ? FOR UPDATE',
      "WITH q AS (SELECT to_tsquery('simple', ?) AS query) SELECT * FROM q",
      'CREATE TABLE t (n integer)',
      'PRAGMA wal_checkpoint(PASSIVE)',
    ];
    expect(writes.filter((w) => !changesRows(w))).toEqual([]);
    expect(others.filter(changesRows)).toEqual([]);
  });
});
