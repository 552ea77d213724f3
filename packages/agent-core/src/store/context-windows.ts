/**
 * Context windows learnt from provider errors, shared by every process on the store (core migration 16): one row
 * per `provider:model`, the smallest limit a provider named while it is fresh. compression/windows.ts keeps them
 * in memory; this is its `WindowBook`.
 */
import type { LearntWindow, WindowBook } from '../compression/windows.js';
import type { Sql } from './sql.js';

export const CONTEXT_WINDOWS_TABLE = `
CREATE TABLE context_windows (
  model_ref      TEXT PRIMARY KEY,
  context_limit  INTEGER NOT NULL CHECK (context_limit > 0),
  learnt_at      INTEGER NOT NULL
);
`;

interface WindowRow {
  model_ref: string;
  context_limit: number | string;
  learnt_at: number | string;
}

export class StoredWindowBook implements WindowBook {
  /** `maxAgeMs`: an older row is replaced by any new limit, not only a smaller one (the server may have changed). */
  constructor(
    private readonly sql: Sql,
    private readonly maxAgeMs: number,
  ) {}

  async save(w: LearntWindow): Promise<void> {
    await this.sql.run(
      `INSERT INTO context_windows (model_ref, context_limit, learnt_at) VALUES (?, ?, ?)
       ON CONFLICT (model_ref) DO UPDATE SET
         context_limit = CASE
           WHEN excluded.context_limit < context_windows.context_limit OR context_windows.learnt_at < ? THEN excluded.context_limit
           ELSE context_windows.context_limit END,
         learnt_at = excluded.learnt_at`,
      [w.key, Math.floor(w.limit), w.learntAt, w.learntAt - this.maxAgeMs],
    );
  }

  async since(since: number): Promise<LearntWindow[]> {
    const rows = await this.sql.all<WindowRow>('SELECT model_ref, context_limit, learnt_at FROM context_windows WHERE learnt_at >= ?', [since]);
    // PostgreSQL's BIGINT comes back as a string.
    return rows.map((r) => ({ key: r.model_ref, limit: Number(r.context_limit), learntAt: Number(r.learnt_at) }));
  }
}
