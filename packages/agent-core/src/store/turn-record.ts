/**
 * A finished turn's record in one call: its messages, the session's counts and usage, the writes that commit with
 * them (the budgets' spend) and the reply, fenced — all or nothing. PostgreSQL: one statement of data-modifying
 * CTEs, atomic by itself, so one round trip where BEGIN, four statements and COMMIT took six (issue 54); SQLite
 * (in-process, no round trips): the same steps in one transaction.
 */
import type { ChatMessage } from '../base/types.js';
import { referencingSession } from './guards.js';
import { appendMessages, countedInsertCtes, countedInsertParams, INSERT_CHUNK } from './messages.js';
import { toTurn, type Turn, type TurnRow } from './rows.js';
import type { UsageDelta } from './sessions.js';
import type { Sql, SqlValue } from './sql.js';
import { explainUnrecordedReply, recordReply, recordReplyCte } from './turns.js';

/** One data-modifying statement (INSERT, UPDATE or DELETE with `?` parameters, no RETURNING) whose result nobody reads. */
export interface SqlWrite {
  sql: string;
  params: readonly SqlValue[];
}

export interface TurnRecord {
  turnId: string;
  fence: number;
  sessionId: string;
  /** The turn's new messages (stored once per turn and position, as appendMessages does). */
  messages: readonly ChatMessage[];
  platformMessageId?: string;
  usage: UsageDelta;
  reply: string;
  /** Claim the reply for sending in the same write (recordReply's `claim`). */
  claim: boolean;
  /** Writes that commit with the record or not at all. On PostgreSQL they see the database as the statement found it. */
  alongside: readonly SqlWrite[];
}

/** PostgreSQL's division_by_zero: the statement's own check that the fenced reply landed (see below). */
const NOT_OURS = '22012';

export async function recordTurn(sql: Sql, rec: TurnRecord): Promise<Turn> {
  if (sql.dialect === 'sqlite' || rec.messages.length === 0 || rec.messages.length > INSERT_CHUNK) {
    return sql.transaction(async () => {
      await appendMessages(sql, rec.sessionId, rec.messages, { turnId: rec.turnId, platformMessageId: rec.platformMessageId, usage: rec.usage });
      for (const w of rec.alongside) await sql.run(w.sql, w.params);
      return recordReply(sql, rec.turnId, rec.reply, rec.fence, [], { claim: rec.claim });
    });
  }
  const reply = recordReplyCte(rec.turnId, rec.reply, rec.fence, rec.claim);
  const writes = rec.alongside.map((w, i) => `w${i} AS (${w.sql})`);
  // Every CTE runs to completion whether or not it is read; an error anywhere undoes all of them. When the fenced
  // update found nothing (`t` empty), 1 / 0 is that error: the messages, usage and spend go with it, as a rolled-back
  // transaction's would.
  const text = `WITH ${[reply.cte, countedInsertCtes(rec.messages.length, true), ...writes].join(', ')}
  SELECT (SELECT row_to_json(t) FROM t) AS turn, 1 / (SELECT count(*) FROM t) AS ours`;
  const params = [
    ...reply.params,
    ...countedInsertParams(rec.sessionId, rec.messages, { turnId: rec.turnId, platformMessageId: rec.platformMessageId, usage: rec.usage }),
    ...rec.alongside.flatMap((w) => w.params),
  ];
  try {
    const row = await referencingSession(rec.sessionId, () => sql.get<{ turn: TurnRow }>(text, params));
    return toTurn((row as { turn: TurnRow }).turn);
  } catch (err) {
    if ((err as { code?: unknown }).code === NOT_OURS) return explainUnrecordedReply(sql, rec.turnId, rec.fence);
    throw err;
  }
}
