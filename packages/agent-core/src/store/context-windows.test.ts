/**
 * Learnt context windows shared through the store, on SQLite and PostgreSQL: what one worker learns another reads
 * on its next refresh; the smallest fresh limit wins; a limit past its time is replaced; a store that fails never
 * costs the in-process value.
 */
import { describe, expect, it } from 'vitest';
import { ContextWindows, LEARNT_WINDOW_TTL_MS } from '../compression/windows.js';
import { StoredWindowBook } from './context-windows.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const VLLM = { name: 'vllm', model: 'qwen3-8b' };
const ROUTER = { name: 'openrouter', model: 'qwen3-8b' };

describe.each(STORE_BACKENDS)('learnt context windows on %s', (backend) => {
  const temp = useTempStores(backend);

  async function twoWorkers(now: () => number = Date.now) {
    const location = await temp.location();
    const [a, b] = [await temp.open(location), await temp.open(location)];
    const windows = (store: typeof a) => new ContextWindows({ book: new StoredWindowBook(store.sql, LEARNT_WINDOW_TTL_MS), now });
    return { a: windows(a), b: windows(b), storeA: a };
  }

  it('a limit one worker learns is the window of every worker after its next refresh, for that provider only', async () => {
    const { a, b } = await twoWorkers();
    await a.learn(VLLM, 6_000);
    expect(b.effective(VLLM)).toBe(128_000); // not read yet: the table's default
    await b.refresh();
    expect(b.effective(VLLM)).toBe(6_000);
    expect(b.effective(VLLM, 4_000)).toBe(4_000); // an override below it still wins
    expect(b.effective(ROUTER)).toBe(128_000); // the same model elsewhere is not limited
  });

  it('the smallest fresh limit wins in the store, whoever learnt it last', async () => {
    const { a, b, storeA } = await twoWorkers();
    await a.learn(VLLM, 6_000);
    await b.learn(VLLM, 9_000); // b did not know about 6,000: the store keeps the smaller
    const rows = await storeA.sql.all<{ model_ref: string; context_limit: number | string }>('SELECT model_ref, context_limit FROM context_windows');
    expect(rows.map((r) => [r.model_ref, Number(r.context_limit)])).toEqual([['vllm:qwen3-8b', 6_000]]);
    await b.refresh();
    expect(b.get(VLLM)).toBe(6_000);
  });

  it('a limit past its time is forgotten, and the next one named replaces it even when larger', async () => {
    let clock = 1_000_000;
    const { a, b } = await twoWorkers(() => clock);
    await a.learn(VLLM, 6_000);
    clock += LEARNT_WINDOW_TTL_MS + 1;
    expect(a.get(VLLM)).toBeUndefined();
    await b.refresh();
    expect(b.get(VLLM)).toBeUndefined();
    await b.learn(VLLM, 32_000); // the server was upgraded
    await a.refresh();
    expect(a.get(VLLM)).toBe(32_000);
  });

  it('a store that cannot be written or read leaves the learnt value in memory and reports the error', async () => {
    const store = await temp.open();
    const errors: unknown[] = [];
    const windows = new ContextWindows({ book: new StoredWindowBook(store.sql, LEARNT_WINDOW_TTL_MS), onBookError: (e) => errors.push(e) });
    await store.close();
    await windows.learn(VLLM, 7_000);
    await windows.refresh();
    expect(windows.get(VLLM)).toBe(7_000);
    expect(errors).toHaveLength(2);
  });

  it('with minRefreshMs, a refresh soon after the last reads nothing unless forced', async () => {
    let t = 1_000_000;
    const location = await temp.location();
    const [a, b] = [await temp.open(location), await temp.open(location)];
    const book = (store: typeof a) => new StoredWindowBook(store.sql, LEARNT_WINDOW_TTL_MS);
    const writer = new ContextWindows({ book: book(a), now: () => t });
    const reader = new ContextWindows({ book: book(b), now: () => t, minRefreshMs: 5_000 });
    await reader.refresh();
    await writer.learn(VLLM, 6_000);
    t += 4_999;
    await reader.refresh();
    expect(reader.get(VLLM)).toBeUndefined();
    await reader.refresh(true);
    expect(reader.get(VLLM)).toBe(6_000);
    await writer.learn(VLLM, 5_000);
    t += 5_000;
    await reader.refresh();
    expect(reader.get(VLLM)).toBe(5_000);
  });
});
