/**
 * What reached the platform, on the turn's outbox row: the delivered message ids, merged with a compare-and-set on
 * the ids as they were (a chunk at a time, or the whole reply at once with the turn marked delivered). A delivery is a
 * fact, so it is recorded whatever fence the sender had: a worker that lost the session mid-send still reports what
 * it sent, and the new owner, waiting for that, does not send it again.
 *
 * On PostgreSQL the delivered marks of turns finishing together go in one statement (`MarkBatches`, batches.ts).
 */
import { Batches, settledOf, textArray } from './batches.js';
import { StoreNotFoundError } from './errors.js';
import { toTurn, type Turn, type TurnRow } from './rows.js';
import type { Sql } from './sql.js';

const SELECT_SQL = 'SELECT * FROM turns WHERE id = ?';
const mergeSql = (status: string): string =>
  `UPDATE turns SET delivered_ids = ?, status = ${status}, updated_at = ? WHERE id = ? AND delivered_ids = ? RETURNING *`;
const MARK_DELIVERED_SQL = mergeSql(`'delivered'`);
const ADD_CHUNK_SQL = mergeSql('status');
/**
 * MARK_DELIVERED_SQL for many turns: each row its own compare-and-set; a turn left out of the result lost it. The
 * turns are found by their ids as an array as well (`id = ANY`): joined on the JSON rows alone, which the planner
 * takes for a hundred, PostgreSQL hashed them and scanned the whole of `turns` for every batch, analyzed or not,
 * until the table held tens of thousands of rows.
 */
const MARK_MANY_DELIVERED_SQL = `UPDATE turns SET delivered_ids = v.ids, status = 'delivered', updated_at = ?
  FROM json_to_recordset(?::json) AS v(id text, ids text, before text)
  WHERE turns.id = ANY(?::text[]) AND turns.id = v.id AND turns.delivered_ids = v.before RETURNING turns.*`;
/** Marks written in one statement at most (a bound on its parameters' size). */
const MAX_MARKS_PER_STATEMENT = 200;

interface Mark {
  turnId: string;
  ids: string;
  before: string;
}

/** The compare-and-set of one turn's ids (and status, by `setSql`): its row as written, or null when it lost. */
async function compareAndSet(sql: Sql, setSql: string, turnId: string, ids: string, before: string): Promise<TurnRow | null> {
  return (await sql.get<TurnRow>(setSql, [ids, Date.now(), turnId, before])) ?? null;
}

/** PostgreSQL: delivered marks of many turns in one statement, one statement at a time (see the top of the file). */
export class MarkBatches {
  private readonly batches: Batches<Mark, TurnRow | null>;

  constructor(sql: Sql) {
    this.batches = new Batches(sql, {
      max: MAX_MARKS_PER_STATEMENT,
      keyOf: (m) => m.turnId,
      one: (m) => compareAndSet(sql, MARK_DELIVERED_SQL, m.turnId, m.ids, m.before),
      together: async (marks) => {
        const json = JSON.stringify(marks.map((m) => ({ id: m.turnId, ids: m.ids, before: m.before })));
        const rows = await sql.all<TurnRow>(MARK_MANY_DELIVERED_SQL, [Date.now(), json, textArray(marks.map((m) => m.turnId))]);
        const byId = new Map(rows.map((r) => [r.id, r]));
        return marks.map((m) => settledOf(() => byId.get(m.turnId) ?? null));
      },
    });
  }

  /** The turn's row as marked, or null when its ids were not `before` any more (the caller reads and tries again). */
  mark(turnId: string, ids: string, before: string): Promise<TurnRow | null> {
    return this.batches.add({ turnId, ids, before });
  }
}

/**
 * Adds delivered ids (and optionally marks the turn delivered) with a compare-and-set on the ids as they were,
 * retried when another writer got in between. `known` (the ids the caller last saw recorded) saves the read in the
 * common case: one statement, no transaction or lock on the per-message path (shared with other turns' marks when
 * `batches` is given).
 */
async function mergeDelivered(
  sql: Sql,
  turnId: string,
  ids: readonly string[],
  delivered: boolean,
  known?: readonly string[],
  batches?: MarkBatches,
): Promise<Turn> {
  const setSql = delivered ? MARK_DELIVERED_SQL : ADD_CHUNK_SQL;
  let before = known === undefined ? undefined : JSON.stringify(known);
  for (;;) {
    if (before === undefined) {
      const current = await sql.get<TurnRow>(SELECT_SQL, [turnId]);
      if (!current) throw new StoreNotFoundError('turn', turnId);
      const had = JSON.parse(current.delivered_ids) as string[];
      if (ids.every((id) => had.includes(id)) && (!delivered || current.status === 'delivered')) return toTurn(current);
      before = current.delivered_ids;
    }
    const merged = JSON.stringify([...new Set([...(JSON.parse(before) as string[]), ...ids])]);
    const row = delivered && batches ? await batches.mark(turnId, merged, before) : await compareAndSet(sql, setSql, turnId, merged, before);
    if (row) return toTurn(row);
    before = undefined; // changed meanwhile (or unknown turn): read and try again
  }
}

/** One more chunk reached the platform: recorded as it happens, so a re-run continues after it. */
export async function recordChunk(sql: Sql, turnId: string, messageId: string, known?: readonly string[]): Promise<Turn> {
  return mergeDelivered(sql, turnId, [messageId], false, known);
}

/** Delivered as these platform messages; ids recorded earlier (chunk by chunk, or before a crash) are kept. */
export async function markDelivered(sql: Sql, turnId: string, ids: readonly string[], known?: readonly string[], batches?: MarkBatches): Promise<Turn> {
  return mergeDelivered(sql, turnId, ids, true, known, batches);
}
