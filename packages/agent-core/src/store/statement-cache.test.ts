/**
 * The compiled-statement caches stay bounded however many different SQL texts run (generated SQL, like a bulk
 * copy's multi-row inserts, varies), and statements past the bound still run correctly.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PREPARED, type PostgresSql } from './postgres-sql.js';
import { MAX_STATEMENTS, SqliteSql } from './sqlite-sql.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

const kept = (sql: unknown): number => (sql instanceof SqliteSql ? sql.statementCount : (sql as PostgresSql).preparedCount);

describe.each(STORE_BACKENDS)('statement cache on %s', (backend) => {
  const temp = useTempStores(backend);

  it('keeps at most its bound of statements, and runs every statement past it right', async () => {
    const store = await temp.open();
    const bound = backend === 'sqlite' ? MAX_STATEMENTS : MAX_PREPARED;
    const texts = bound + 40;
    for (let i = 0; i < texts; i++) {
      const row = await store.sql.get<{ n: number | string }>(`SELECT ? + ${i} AS n`, [1]);
      expect(Number(row?.n)).toBe(i + 1);
      expect(kept(store.sql)).toBeLessThanOrEqual(bound);
    }
    expect(kept(store.sql)).toBe(bound);
    // The store's own statements still work after the flood.
    const { session } = await store.getOrCreateSession('agent:main:telegram:dm:9', { source: 'telegram' });
    await store.appendMessages(session.id, [{ role: 'user', content: 'still here' }]);
    expect((await store.getHistory(session.id)).map((m) => m.content)).toEqual(['still here']);
  });
});
