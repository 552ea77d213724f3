/** Statements shared by items that come together (batches.ts), with a writer that records what it was asked. */
import { describe, expect, it } from 'vitest';
import { Batches, settledOf } from './batches.js';
import { StoreUnavailableError } from './errors.js';
import type { Sql } from './sql.js';

interface Item {
  key: string;
  value: number;
}

/**
 * A writer doubling values (a negative one is refused); `together` fails with `fail` when set. The first statement
 * stays in flight until `release`. Its calls: ['one', key] or ['together', keys].
 */
function writer(fail?: () => Error) {
  // Only whether a transaction is open is asked of the store.
  const sql = { inTransaction: false };
  const calls: Array<[string, string | string[]]> = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const batches = new Batches<Item, number>(sql as Sql, {
    max: 3,
    maxSize: 100,
    sizeOf: (i) => (i.key.startsWith('big') ? 60 : 1),
    keyOf: (i) => i.key,
    canShare: (i) => !i.key.startsWith('alone'),
    one: async (i) => {
      calls.push(['one', i.key]);
      if (calls.length === 1) await gate;
      if (i.value < 0) throw new Error(`refused ${i.key}`);
      return i.value * 2;
    },
    together: async (items) => {
      calls.push(['together', items.map((i) => i.key)]);
      if (fail) throw fail();
      return items.map((i) => settledOf(() => i.value * 2));
    },
  });
  return { batches, calls, release, sql };
}

describe('Batches', () => {
  it('a lone item goes alone; those that come meanwhile go together, within the bounds, never two of one key', async () => {
    const { batches, calls, release } = writer();
    const items = ['a', 'b', 'c', 'b', 'd', 'e', 'big1', 'big2'].map((key, value) => batches.add({ key, value }));
    release();
    expect(await Promise.all(items)).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
    // At most three items, never two of one key, and at most a size of 100: the two big ones do not share one.
    expect(calls).toEqual([
      ['one', 'a'],
      ['together', ['b', 'c', 'd']],
      ['together', ['b', 'e', 'big1']],
      ['one', 'big2'],
    ]);
  });

  it('a shared statement the server refuses is run item by item: the one that fails fails alone', async () => {
    const { batches, calls, release } = writer(() => new Error('refused'));
    const outcomes = Promise.allSettled(['a', 'b', 'c'].map((key, i) => batches.add({ key, value: key === 'c' ? -1 : i })));
    release();
    expect((await outcomes).map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([0, 2, 'refused c']);
    expect(calls.map(([kind, keys]) => `${kind} ${keys}`)).toEqual(['one a', 'together b,c', 'one b', 'one c']);
  });

  it('a lost connection fails every item of the shared statement with it, none run again', async () => {
    const lost = new StoreUnavailableError('connection lost');
    const { batches, calls, release } = writer(() => lost);
    const outcomes = Promise.allSettled(['a', 'b', 'c'].map((key, value) => batches.add({ key, value })));
    release();
    expect((await outcomes).map((o) => o.status === 'rejected' && o.reason)).toEqual([false, lost, lost]);
    expect(calls).toHaveLength(2);
  });

  it('an item that cannot share, or one inside a transaction, goes alone at once, even while a statement is in flight', async () => {
    const { batches, calls, release, sql } = writer();
    const first = batches.add({ key: 'a', value: 0 });
    const alone = batches.add({ key: 'alone', value: 1 });
    sql.inTransaction = true;
    const inTransaction = batches.add({ key: 'tx', value: 2 });
    sql.inTransaction = false;
    expect(await Promise.all([alone, inTransaction])).toEqual([2, 4]);
    release();
    expect(await first).toBe(0);
    expect(calls).toEqual([
      ['one', 'a'],
      ['one', 'alone'],
      ['one', 'tx'],
    ]);
  });
});
