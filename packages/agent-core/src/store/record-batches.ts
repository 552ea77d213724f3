/**
 * PostgreSQL: the records of turns finishing together (recordTurn's one statement, turns.ts) written in one statement
 * (batches.ts): their replies under their fences, their messages, their sessions' counts and usage, and the writes
 * alongside merged by kind (the budgets' spend: one upsert for all, the rows they share added up first). All or
 * nothing, like one record's statement: when any turn's fenced reply found nothing (1 / 0), the server refuses it
 * and each record is written on its own (batches.ts), so a record that fails fails alone with its own error.
 */
import { Batches, settledOf, textArray } from './batches.js';
import { ADDED_BY_SESSION_SQL, INSERT_FROM_JSON_SQL, messageRowObjects } from './messages.js';
import { toTurn, type Turn, type TurnRow } from './rows.js';
import { USAGE_VALUE_TYPES, usageSet, usageValues } from './sessions.js';
import type { Sql, SqlValue } from './sql.js';
import { type OneStatementRecord, type RecordBatcher, recordInOneStatement, replySet, type SqlWrite, type WriteMerge } from './turns.js';

/** Records in one statement, at most: its rows' locks are held until its transaction ends. */
const MAX_RECORDS = 64;
/**
 * Characters of text in one statement, at most, summed over its records (recordChars): far below PostgreSQL's 1 GB
 * for a message, so a few long turns (tool results of 100,000 characters, hundreds of messages) are not refused as one.
 */
const MAX_RECORD_CHARS = 16_000_000;

/** A record's text, about: what its JSON rows carry beyond their fixed columns. */
function recordChars(rec: OneStatementRecord): number {
  let n = rec.reply.length;
  for (const m of rec.messages) {
    n += (m.content?.length ?? 0) + (m.reasoning?.length ?? 0);
    for (const c of m.tool_calls ?? []) n += c.function.arguments.length;
  }
  return n;
}

/**
 * The turns' replies (RECORD_REPLY or RECORD_CLAIMED_REPLY of turns.ts for each row of `u`), their messages, and their
 * sessions' counts and usage (as countedInsertCtes does for one); then the merged writes, then the check that every
 * turn's reply landed (1 / 0 otherwise). Turns and sessions are found by their ids as arrays too (see
 * MARK_MANY_DELIVERED_SQL in deliveries.ts for why).
 */
const recordManySql = (writes: readonly string[]): string => `WITH u AS (SELECT * FROM json_to_recordset(?::json)
    AS u(turn_id text, fence bigint, reply text, claim int, session_id text, ${USAGE_VALUE_TYPES})),
  t AS (UPDATE turns SET ${replySet('u.reply', '0')}, send_attempts = turns.send_attempts + u.claim, updated_at = ?
    FROM u WHERE turns.id = ANY(?::text[]) AND turns.id = u.turn_id AND turns.fence = u.fence AND turns.status = 'running' RETURNING turns.*),
  ins AS (${INSERT_FROM_JSON_SQL}),
  added AS (${ADDED_BY_SESSION_SQL}),
  upd AS (UPDATE sessions SET message_count = sessions.message_count + coalesce(added.messages, 0),
    tool_call_count = sessions.tool_call_count + coalesce(added.tool_calls, 0), ${usageSet((v) => `u.${v}`, 'sessions.')}
    FROM u LEFT JOIN added ON added.session_id = u.session_id WHERE sessions.id = ANY(?::text[]) AND sessions.id = u.session_id)${writes
      .map((w, i) => `,\n  w${i} AS (${w})`)
      .join('')}
  SELECT (SELECT json_agg(row_to_json(t)) FROM t) AS turns, 1 / ((SELECT count(*) FROM t) = ?)::int AS ours`;
const recordManySqlByWrites = new Map<string, string>();

/** A record can share a statement when every write alongside it can be merged with others of its kind. */
const canShare = (rec: OneStatementRecord): boolean => rec.alongside.every((w) => w.merge !== undefined);

export class RecordBatches implements RecordBatcher {
  private readonly batches: Batches<OneStatementRecord, Turn>;

  constructor(private readonly sql: Sql) {
    this.batches = new Batches(sql, {
      max: MAX_RECORDS,
      maxSize: MAX_RECORD_CHARS,
      sizeOf: recordChars,
      keyOf: (rec) => rec.sessionId,
      canShare,
      one: (rec) => recordInOneStatement(sql, rec),
      together: async (records) => {
        const byId = new Map((await this.writeTogether(records)).map((r) => [r.id, r]));
        return records.map((r) => settledOf(() => toTurn(byId.get(r.turnId) as TurnRow)));
      },
    });
  }

  record(rec: OneStatementRecord): Promise<Turn> {
    return this.batches.add(rec);
  }

  private async writeTogether(records: readonly OneStatementRecord[]): Promise<TurnRow[]> {
    const writes = mergedWrites(records);
    const key = writes.map((w) => w.sql).join('\0');
    let text = recordManySqlByWrites.get(key);
    if (text === undefined) recordManySqlByWrites.set(key, (text = recordManySql(writes.map((w) => w.sql))));
    const turns = records.map((r) => ({
      turn_id: r.turnId,
      fence: r.fence,
      reply: r.reply,
      claim: r.claim ? 1 : 0,
      session_id: r.sessionId,
      ...usageValues(r.usage),
    }));
    const messages = records.flatMap((r) => messageRowObjects(r.sessionId, r.messages, { turnId: r.turnId, platformMessageId: r.platformMessageId }));
    const params: SqlValue[] = [
      JSON.stringify(turns),
      Date.now(),
      textArray(records.map((r) => r.turnId)),
      JSON.stringify(messages),
      textArray(records.map((r) => r.sessionId)),
      ...writes.flatMap((w) => w.params),
      records.length,
    ];
    const row = await this.sql.get<{ turns: TurnRow[] }>(text, params);
    return (row as { turns: TurnRow[] }).turns;
  }
}

/**
 * The records' writes alongside, merged by kind, the kinds in a fixed order (so the statement's text is too). Every
 * write has its merge: a record with one that has none never shares a statement (canShare).
 */
function mergedWrites(records: readonly OneStatementRecord[]): SqlWrite[] {
  const byKind = new Map<string, { merge: WriteMerge; writes: SqlWrite[] }>();
  for (const w of records.flatMap((r) => r.alongside)) {
    const merge = w.merge as WriteMerge;
    const kind = byKind.get(merge.key);
    if (kind) kind.writes.push(w);
    else byKind.set(merge.key, { merge, writes: [w] });
  }
  return [...byKind.keys()].sort().map((key) => {
    const { merge, writes } = byKind.get(key) as { merge: WriteMerge; writes: SqlWrite[] };
    return merge.merge(writes);
  });
}
