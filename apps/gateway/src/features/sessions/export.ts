/**
 * Sessions exported as ShareGPT trajectories, one JSON object per line (agent-core trajectory/sharegpt.ts), for
 * `herald sessions export --format sharegpt` and GET /admin/sessions/export. Filters: source, start date
 * range, completion status. Sessions are read a page at a time, so a large store streams out. Neither the saved
 * notes nor the ephemeral system prompt are in a trajectory (never stored; notes blocks of older sessions removed).
 */
import { toShareGpt, withoutStoredMemoryBlocks, type SessionSource, type SessionStore } from '@herald/agent-core';

export const EXPORT_FORMATS = ['sharegpt'] as const;
export const EXPORT_STATUSES = ['completed', 'failed', 'all'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];
const PAGE = 100;

export interface ExportFilter {
  source?: SessionSource;
  /** Sessions started at or after this time (ms). */
  since?: number;
  /** Sessions started before this time (ms). */
  until?: number;
  status?: ExportStatus;
}

export async function* exportShareGpt(store: SessionStore, filter: ExportFilter = {}): AsyncGenerator<string> {
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({ source: filter.source, cursor, limit: PAGE });
    for (const s of page.sessions) {
      if (filter.since !== undefined && s.startedAt < filter.since) continue;
      if (filter.until !== undefined && s.startedAt >= filter.until) continue;
      // Without the saved-notes block sessions from before B7 stored in their first message (N2): the person's
      // notes are not part of the conversation.
      const record = toShareGpt(s, withoutStoredMemoryBlocks(await store.getHistory(s.id)));
      if (record.conversations.every((t) => t.from === 'system')) continue; // nothing was said
      const status = filter.status ?? 'all';
      if (status !== 'all' && record.completed !== (status === 'completed')) continue;
      yield `${JSON.stringify(record)}\n`;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

/** `2025-03-01` or a full ISO time → ms; throws naming the option. */
export function parseExportDate(value: string, option: string): number {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms))
    throw new RangeError(`${option}: must be a date such as 2025-03-01 or 2025-03-01T12:00:00Z (got ${JSON.stringify(value)})`);
  return ms;
}
