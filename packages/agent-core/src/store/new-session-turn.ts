/**
 * A turn begun in a new session: for a key with no open session (beginTurnInOpenSession found none), the session the
 * turn's transcript goes to, created with its prompt record, and the turn begun in it.
 *
 * PostgreSQL: one statement (issue 54) where BEGIN, the key's lock, a read, the insert, COMMIT, the prompt record and
 * the turn's begin took seven round trips. It takes the same advisory lock as every transaction that moves the key
 * (sessions.ts), so none of them runs between; and it points the key at the new session only where the key is new or
 * its session has ended (a conditional upsert: the key's row is locked and read as it is now). Otherwise — a session
 * opened by another process after this statement's snapshot, which the lock waited for — it writes nothing and the
 * caller's path below runs: the locked read finds that session open. SQLite (in-process): that path only.
 */
import { ADVISORY_XACT_LOCK } from './postgres-sql.js';
import { toSession, toTurn, type SessionRow, type TurnRow } from './rows.js';
import {
  getOrCreateSession,
  insertSessionSql,
  keyLockName,
  newSessionId,
  promptParams,
  RECORD_PROMPT_CTE,
  SESSION_VALUES,
  sessionParams,
  type SessionInit,
} from './sessions.js';
import type { Sql, SqlValue } from './sql.js';
import { beginTurn, beginTurnSql, NOTES_JSON, notesRead, type NotesColumn, type OpenedTurn } from './turns.js';
import { FencedOutError } from './errors.js';

/** The key, when it is new or its session ended, pointed at the new session `?` (key, id, time). */
const POINT_FREE_KEY_CTE = `k AS (INSERT INTO session_keys (key, session_id, updated_at) SELECT ?, ?, ? FROM l
  ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at
  WHERE EXISTS (SELECT 1 FROM sessions o WHERE o.id = session_keys.session_id AND o.ended_at IS NOT NULL)
  RETURNING session_id)`;

/** The whole statement; `prompt` and `notes` say whether it records a prompt and reads notes (parameters in text order). */
function newSessionTurnSql(prompt: boolean, notes: boolean): string {
  return `WITH l AS (SELECT ${ADVISORY_XACT_LOCK} AS locked),
  ${POINT_FREE_KEY_CTE},
  s AS (${insertSessionSql(`SELECT ${SESSION_VALUES} FROM k`)}),${prompt ? `\n  ${RECORD_PROMPT_CTE},` : ''}
  t AS (${beginTurnSql(`SELECT ?, s.id, 'running', ?, ?, ? FROM s`)})
  SELECT row_to_json(s) AS session, (SELECT row_to_json(t) FROM t) AS turn${notes ? `, ${NOTES_JSON} AS notes` : ''} FROM s`;
}

const STATEMENTS = [false, true].map((prompt) => [false, true].map((notes) => newSessionTurnSql(prompt, notes)));

type NewSessionTurnRow = NotesColumn & { session: SessionRow; turn: TurnRow | null };

/** A turn begun in a session that is new (`created`) or was opened meanwhile by another turn. */
export interface NewSessionTurn extends OpenedTurn {
  created: boolean;
}

export async function beginTurnInNewSession(
  sql: Sql,
  turnId: string,
  key: string,
  init: SessionInit,
  fence: number,
  notesOf?: string,
): Promise<NewSessionTurn> {
  if (sql.dialect === 'postgres' && !sql.inTransaction) {
    const begun = await createAndBegin(sql, turnId, key, init, fence, notesOf);
    if (begun) return begun;
  }
  const { session, created } = await getOrCreateSession(sql, key, init, { noneOpen: true });
  return { session, created, ...(await beginTurn(sql, turnId, session.id, fence, notesOf)) };
}

/** PostgreSQL's one statement; null when the key's session is open (nothing written). */
async function createAndBegin(sql: Sql, turnId: string, key: string, init: SessionInit, fence: number, notesOf?: string): Promise<NewSessionTurn | null> {
  const now = Date.now();
  const id = newSessionId(now);
  const params: SqlValue[] = [keyLockName(key), key, id, now, ...sessionParams(id, key, init, null, now)];
  if (init.prompt) params.push(...promptParams(init.prompt, now));
  params.push(turnId, fence, now, now);
  if (notesOf !== undefined) params.push(notesOf);
  const row = await sql.get<NewSessionTurnRow>(STATEMENTS[init.prompt ? 1 : 0][notesOf !== undefined ? 1 : 0], params);
  if (!row) return null;
  if (!row.turn) throw new FencedOutError(turnId, fence); // a newer fence owns it
  return {
    session: toSession(row.session),
    turn: toTurn(row.turn),
    created: true,
    ...(notesOf !== undefined && { notes: notesRead(notesOf, row.notes) }),
  };
}
