/**
 * A finished turn's record in one call: its messages, the session's counts and usage, the writes that commit with
 * them (the budgets' spend) and the reply (with its files), fenced — all or nothing. Every finished turn is
 * recorded here, on both stores. PostgreSQL, for the common turn (its messages appended, no files, the reply known
 * up front): one statement of data-modifying CTEs, atomic by itself, so one round trip where BEGIN, four
 * statements and COMMIT took six (issue 54). Otherwise, and always on SQLite (in-process, no round trips): the same
 * steps in one transaction.
 */
import type { ChatMessage } from '../base/types.js';
import { referencingSession } from './guards.js';
import { appendMessages, countedInsertCtes, countedInsertParams, INSERT_CHUNK } from './messages.js';
import { toTurn, type Turn, type TurnRow } from './rows.js';
import type { UsageDelta } from './sessions.js';
import type { Sql, SqlValue } from './sql.js';
import type { NewTurnFile } from './turn-files.js';
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
  /**
   * The reply; or, when its text depends on what the record wrote (the budgets' 80 % notice reads the spend), a
   * function giving it inside the record's transaction, after the writes alongside.
   */
  reply: string | (() => Promise<string>);
  /** Claim the reply for sending in the same write (recordReply's `claim`). */
  claim: boolean;
  /** Writes that commit with the record or not at all. On PostgreSQL they see the database as the statement found it. */
  alongside: readonly SqlWrite[];
  /** Files the reply carries (turn-files.ts), recorded with it. */
  files?: readonly NewTurnFile[];
  /**
   * Stores the messages and the usage itself instead of appending them to `sessionId` (the loop compressed inside
   * the turn: they go into a child session the key moves to); runs first in the record's transaction.
   */
  persist?: () => Promise<void>;
}

/** A record PostgreSQL writes in one statement: its messages appended here (one insert's worth), no files. */
const oneStatement = (rec: TurnRecord): boolean =>
  !rec.persist && (rec.files ?? []).length === 0 && rec.messages.length > 0 && rec.messages.length <= INSERT_CHUNK;

/** PostgreSQL's division_by_zero: the statement's own check that the fenced reply landed (see below). */
const NOT_OURS = '22012';

export async function recordTurn(sql: Sql, rec: TurnRecord): Promise<Turn> {
  const { reply: replyText } = rec;
  const files = rec.files ?? [];
  if (sql.dialect === 'sqlite' || typeof replyText !== 'string' || !oneStatement(rec)) {
    return sql.transaction(async () => {
      if (rec.persist) await rec.persist();
      else await appendMessages(sql, rec.sessionId, rec.messages, { turnId: rec.turnId, platformMessageId: rec.platformMessageId, usage: rec.usage });
      for (const w of rec.alongside) await sql.run(w.sql, w.params);
      return recordReply(sql, rec.turnId, typeof replyText === 'string' ? replyText : await replyText(), rec.fence, files, { claim: rec.claim });
    });
  }
  const reply = recordReplyCte(rec.turnId, replyText, rec.fence, rec.claim);
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
