/**
 * Delivered marks: turns finishing together are marked delivered, each with its own ids and compare-and-set; on
 * PostgreSQL in fewer statements than marks (deliveries.ts MarkBatches), on SQLite one write each.
 */
import { describe, expect, it } from 'vitest';
import { StoreNotFoundError } from './errors.js';
import type { SessionStore } from './session-store.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

/** Counts the statements the store sends that mark turns delivered. */
function countMarks(store: SessionStore): () => number {
  let marks = 0;
  const { sql } = store;
  const all = sql.all.bind(sql);
  const get = sql.get.bind(sql);
  const counted = (text: string) => {
    if (text.includes("status = 'delivered'")) marks += 1;
  };
  Object.assign(sql, {
    all: (text: string, params?: never) => (counted(text), all(text, params)),
    get: (text: string, params?: never) => (counted(text), get(text, params)),
  });
  return () => marks;
}

describe.each(STORE_BACKENDS)('delivered marks on %s', (backend) => {
  const temp = useTempStores(backend);

  async function turnsStarted(n: number) {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram' });
    const ids = Array.from({ length: n }, (_, i) => `T${i}`);
    for (const id of ids) {
      await store.beginTurn(id, session.id, 1);
      await store.recordReply(id, `reply ${id}`, 1);
    }
    return { store, ids };
  }

  it('marks many turns finishing together, each with its own ids (fewer statements than marks on PostgreSQL)', async () => {
    const { store, ids } = await turnsStarted(30);
    await store.recordChunk('T3', 'm-T3-early');
    const marks = countMarks(store);
    const marked = await Promise.all(ids.map((id) => store.markDelivered(id, [`m-${id}`], id === 'T3' ? ['m-T3-early'] : [])));
    for (const [i, turn] of marked.entries()) {
      expect(turn).toMatchObject({ id: ids[i], status: 'delivered' });
      expect(await store.getTurn(ids[i])).toEqual(turn);
    }
    expect(marked[3].deliveredIds).toEqual(['m-T3-early', 'm-T3']);
    if (backend === 'postgres') expect(marks()).toBeLessThan(ids.length);
    else expect(marks()).toBe(ids.length);
  });

  it('a mark whose known ids are out of date reads the turn and merges; the same turn marked twice at once keeps both', async () => {
    const { store } = await turnsStarted(2);
    await store.recordChunk('T0', 'chunk-1');
    // The sender believed nothing was recorded yet: its compare-and-set fails, the read finds chunk-1, both stay.
    const [stale, twiceA, twiceB] = await Promise.all([
      store.markDelivered('T0', ['chunk-2'], []),
      store.markDelivered('T1', ['a'], []),
      store.markDelivered('T1', ['b'], []),
    ]);
    expect(stale.deliveredIds).toEqual(['chunk-1', 'chunk-2']);
    expect([twiceA.status, twiceB.status]).toEqual(['delivered', 'delivered']);
    expect(new Set((await store.getTurn('T1'))?.deliveredIds)).toEqual(new Set(['a', 'b']));
  });

  it('an unknown turn is refused, and the other marks sent with it still land', async () => {
    const { store } = await turnsStarted(1);
    const [unknown, known] = await Promise.allSettled([store.markDelivered('nope', ['x'], []), store.markDelivered('T0', ['y'], [])]);
    expect(unknown.status === 'rejected' && unknown.reason).toBeInstanceOf(StoreNotFoundError);
    expect(known.status === 'fulfilled' && known.value.deliveredIds).toEqual(['y']);
  });
});
