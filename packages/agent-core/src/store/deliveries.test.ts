/**
 * Delivered marks: turns finishing together are marked delivered, each with its own ids and compare-and-set; on
 * PostgreSQL in fewer statements than marks (deliveries.ts MarkBatches), on SQLite one write each.
 */
import { describe, expect, it } from 'vitest';
import { StoreNotFoundError } from './errors.js';
import type { SessionStore } from './session-store.js';
import type { SqlValue } from './sql.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

interface SentMark {
  text: string;
  params: readonly SqlValue[];
}

/** The statements the store sends that mark turns delivered, as sent. */
function watchMarks(store: SessionStore): SentMark[] {
  const marks: SentMark[] = [];
  const { sql } = store;
  const all = sql.all.bind(sql);
  const get = sql.get.bind(sql);
  const seen = (text: string, params: readonly SqlValue[] = []) => {
    if (text.includes("status = 'delivered'")) marks.push({ text, params });
  };
  Object.assign(sql, {
    all: (text: string, params?: never) => (seen(text, params), all(text, params)),
    get: (text: string, params?: never) => (seen(text, params), get(text, params)),
  });
  return marks;
}

describe.each(STORE_BACKENDS)('delivered marks on %s', (backend) => {
  const temp = useTempStores(backend);

  async function turnsStarted(n: number, prefix = 'T') {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram' });
    const ids = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    for (const id of ids) {
      await store.beginTurn(id, session.id, 1);
      await store.recordReply(id, `reply ${id}`, 1);
    }
    return { store, ids };
  }

  it('marks many turns finishing together, each with its own ids (fewer statements than marks on PostgreSQL)', async () => {
    const { store, ids } = await turnsStarted(30);
    await store.recordChunk('T3', 'm-T3-early');
    const marks = watchMarks(store);
    const marked = await Promise.all(ids.map((id) => store.markDelivered(id, [`m-${id}`], id === 'T3' ? ['m-T3-early'] : [])));
    for (const [i, turn] of marked.entries()) {
      expect(turn).toMatchObject({ id: ids[i], status: 'delivered' });
      expect(await store.getTurn(ids[i])).toEqual(turn);
    }
    expect(marked[3].deliveredIds).toEqual(['m-T3-early', 'm-T3']);
    if (backend === 'postgres') expect(marks.length).toBeLessThan(ids.length);
    else expect(marks.length).toBe(ids.length);
  });

  it('marks turns whose ids hold quotes, backslashes, commas and braces', async () => {
    const { store, ids } = await turnsStarted(4, 'odd "id", \\ {x} ');
    const marks = watchMarks(store);
    const marked = await Promise.all(ids.map((id) => store.markDelivered(id, [`m-${id}`], [])));
    expect(marked.map((t) => [t.id, t.status, t.deliveredIds])).toEqual(ids.map((id) => [id, 'delivered', [`m-${id}`]]));
    // On PostgreSQL the marks after the first went together, their ids in one array.
    if (backend === 'postgres') expect(marks.some((m) => m.text.includes('json_to_recordset'))).toBe(true);
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

describe('delivered marks on postgres, planned', () => {
  const temp = useTempStores('postgres');

  it('finds a batch of turns by their key, not by a scan of every turn', async () => {
    const store = await temp.open();
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram' });
    await store.sql.run(
      `INSERT INTO turns (id, session_id, status, fence, created_at, updated_at)
       SELECT 'old-' || g, ?, 'delivered', 1, 0, 0 FROM generate_series(1, 3000) g`,
      [session.id],
    );
    for (const id of ['A', 'B', 'C']) {
      await store.beginTurn(id, session.id, 1);
      await store.recordReply(id, `reply ${id}`, 1);
    }
    const marks = watchMarks(store);
    // The first goes alone; the two that come meanwhile go together.
    await Promise.all(['A', 'B', 'C'].map((id) => store.markDelivered(id, [`m-${id}`], [])));
    const batch = marks.find((m) => m.text.includes('json_to_recordset'));
    expect(batch).toBeDefined();
    const plan = await store.sql.all<{ 'QUERY PLAN': string }>(`EXPLAIN ${batch?.text}`, batch?.params);
    const lines = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(lines).toContain('turns_pkey');
    expect(lines).not.toContain('Seq Scan on turns');
  });
});
