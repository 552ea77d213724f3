/**
 * The turn outbox. A worker killed mid-turn has its job re-run elsewhere; the turn row tells the re-run what
 * already happened (reply computed? delivered, and as which platform messages?) so nothing is sent twice.
 *
 * A finished turn's record goes in one call (`recordTurn`, at the end): its messages, the session's counts and
 * usage, the writes that commit with them (the budgets' spend) and the reply (with its files), fenced — all or
 * nothing. Every finished turn is recorded there, on both stores. PostgreSQL, for the common turn (its messages
 * appended, no files, the reply known up front): one statement of data-modifying CTEs, atomic by itself, so one round
 * trip where BEGIN, four statements and COMMIT took six (issue 54), shared with the records of turns finishing together
 * (record-batches.ts). Otherwise, and always on SQLite (in-process, no round trips): the same steps in one transaction.
 */
import type { ChatMessage } from '../base/types.js';
import { FencedOutError, StoreNotFoundError } from './errors.js';
import { referencingSession } from './guards.js';
import { appendMessages, countedInsertCtes, countedInsertParams, INSERT_CHUNK, type TurnHistory } from './messages.js';
import { toTurn, type Session, type Turn, type TurnRow, type TurnStatus } from './rows.js';
import { currentSessionActivity, type UsageDelta } from './sessions.js';
import type { Sql, SqlValue } from './sql.js';
import { addTurnFiles, type NewTurnFile } from './turn-files.js';

const SELECT_SQL = 'SELECT * FROM turns WHERE id = ?';

/** A new running turn, or a re-run taking it over by raising its fence (nothing, when a newer fence owns it). */
export const beginTurnSql = (source: string): string => `INSERT INTO turns (id, session_id, status, fence, created_at, updated_at) ${source}
  ON CONFLICT (id) DO UPDATE SET fence = excluded.fence, updated_at = excluded.updated_at
  WHERE turns.fence IS NULL OR turns.fence <= excluded.fence
  RETURNING *`;
const BEGIN_TURN_SQL = beginTurnSql(`VALUES (?, ?, 'running', ?, ?, ?)`);
/**
 * PostgreSQL: a person's saved notes (the memory tool's table, `tool_memory`) as one JSON array of [target, content]
 * pairs in the tool's order, null when there are none; read with a turn's begin instead of in a round trip of its own.
 * A few short entries at most (their parts have character limits), so building JSON costs the server little.
 */
export const notesJsonOf = (userKey: string): string =>
  `(SELECT json_agg(json_build_array(target, content) ORDER BY target, id) FROM tool_memory WHERE user_key = ${userKey})`;
export const NOTES_JSON = notesJsonOf('?');
// The statements that read notes are kept apart from those that do not: `tool_memory` is the builtins' table
// (builtins/tables.ts registers its migration), so a store opened without them has none to read.
const BEGIN_TURN_WITH_NOTES_SQL = `${BEGIN_TURN_SQL}, ${NOTES_JSON} AS notes`;
/** One fenced write: its SET clause and the statuses it applies to (any when absent), its SQL written once. */
interface FencedWrite {
  readonly sql: string;
  readonly statuses: readonly TurnStatus[];
}

function fencedWrite(set: string, statuses: readonly TurnStatus[] = []): FencedWrite {
  const statusCond = statuses.length > 0 ? ` AND status IN (${statuses.map(() => '?').join(', ')})` : '';
  return { sql: `UPDATE turns SET ${set}, updated_at = ? WHERE id = ? AND fence = ?${statusCond} RETURNING *`, statuses };
}

/** A fenced write's parameters: its SET clause's, then the time, the turn, the fence and the statuses. */
const fencedParams = (write: FencedWrite, turnId: string, fence: number, params: readonly SqlValue[]): SqlValue[] => [
  ...params,
  Date.now(),
  turnId,
  fence,
  ...write.statuses,
];

/** A recorded reply's columns: `reply` and `fileCount` where the statement has them (parameters, or columns). */
export const replySet = (reply: string, fileCount: string): string => `status = 'replied', reply = ${reply}, file_count = ${fileCount}`;
const SET_REPLY = replySet('?', '?');
const COUNT_SEND_ATTEMPT = 'send_attempts = send_attempts + 1';
const RECORD_REPLY = fencedWrite(SET_REPLY, ['running']);
/** The reply and the send intent in one write: what recordReply and claimDelivery write one after the other. */
const RECORD_CLAIMED_REPLY = fencedWrite(`${SET_REPLY}, ${COUNT_SEND_ATTEMPT}`, ['running']);
const ASSERT_RUNNING = fencedWrite('status = status', ['running']);
const CLAIM_DELIVERY = fencedWrite(COUNT_SEND_ATTEMPT, ['replied']);
const RECORD_STREAM_MESSAGE = fencedWrite('stream_message_id = ?');
const MARK_TURN = fencedWrite('status = ?, error = ?');

/**
 * Every write after `beginTurn` names the fence it was given and lands only while that fence still owns the turn:
 * a worker that lost its lock (or a turn the watchdog abandoned) can neither write nor send any more.
 */
async function fencedUpdate(sql: Sql, turnId: string, fence: number, write: FencedWrite, params: SqlValue[]): Promise<Turn | null> {
  const row = await sql.get<TurnRow>(write.sql, fencedParams(write, turnId, fence, params));
  if (row) return toTurn(row);
  await whyNotWritten(sql, turnId, fence);
  return null; // ours, but not in a state this write applies to
}

/** After a fenced write matched nothing: throws when the turn is unknown or another fence owns it. */
async function whyNotWritten(sql: Sql, turnId: string, fence: number): Promise<void> {
  const current = await getTurn(sql, turnId);
  if (!current) throw new StoreNotFoundError('turn', turnId);
  if (current.fence !== fence) throw new FencedOutError(turnId, fence);
}

/**
 * recordReply (no files) as a CTE named `t` for a statement of its own (`recordTurn`, below), with its parameters; the
 * statement must fail when `t` is empty (explainUnrecordedReply then says why).
 */
function recordReplyCte(turnId: string, reply: string, fence: number, claim: boolean): { cte: string; params: SqlValue[] } {
  const write = claim ? RECORD_CLAIMED_REPLY : RECORD_REPLY;
  return { cte: `t AS (${write.sql})`, params: fencedParams(write, turnId, fence, [reply, 0]) };
}

/** Why a reply was not recorded: the turn is unknown, or not this fence's running turn (FencedOutError). */
async function explainUnrecordedReply(sql: Sql, turnId: string, fence: number): Promise<never> {
  await whyNotWritten(sql, turnId, fence);
  throw new FencedOutError(turnId, fence);
}

/**
 * Starts a turn as `running` under `fence`; a re-run (the row exists) takes the turn over by raising its fence,
 * unless a newer fence owns it already (then FencedOutError). Returns the turn as it is now.
 */
export async function beginTurn(sql: Sql, turnId: string, sessionId: string, fence: number, notesOf?: string): Promise<BegunTurn> {
  // One statement, no transaction: the insert, or the conditional raise that decides who owns the turn.
  const now = Date.now();
  const withNotes = notesOf !== undefined && sql.dialect === 'postgres';
  const row = await referencingSession(sessionId, () =>
    withNotes
      ? sql.get<TurnRow & NotesColumn>(BEGIN_TURN_WITH_NOTES_SQL, [turnId, sessionId, fence, now, now, notesOf])
      : sql.get<TurnRow & NotesColumn>(BEGIN_TURN_SQL, [turnId, sessionId, fence, now, now]),
  );
  if (!row) throw new FencedOutError(turnId, fence); // a newer fence owns it
  return { turn: toTurn(row), ...(withNotes && { notes: notesRead(notesOf, row.notes) }) };
}

/** The saved notes of one person (the memory tool's), read with a turn's begin. */
export interface NotesRead {
  userKey: string;
  /** [target, content] in the memory tool's order (by target, oldest first). */
  entries: Array<[string, string]>;
}

export interface NotesColumn {
  /** PostgreSQL's json comes parsed by the driver; null when the person has no notes. */
  notes?: Array<[string, string]> | null;
}

export function notesRead(userKey: string, entries: NotesColumn['notes']): NotesRead {
  return { userKey, entries: Array.isArray(entries) ? entries : [] };
}

/** A turn begun, and on PostgreSQL, when asked for, the saved notes of the person it answers. */
export interface BegunTurn {
  turn: Turn;
  /** Absent on SQLite (reading them later costs no round trip) and when not asked for. */
  notes?: NotesRead;
}

/** A turn begun in its key's open session; on PostgreSQL with the turn's transcript as it was then (getTurnHistory). */
export interface OpenedTurn extends BegunTurn {
  session: Session;
  /** Absent on SQLite, where reading it later costs no round trip. */
  history?: TurnHistory;
}

/** The key's open session, last active before the time given: expired, so no turn was begun in it. */
export interface ExpiredSession {
  expired: Session;
  lastActivity: number;
}

/**
 * beginTurn in the key's open session, in separate statements (SQLite reads in-process, no round trips to save;
 * PostgreSQL begins in one statement, open-session-turn.ts). Null when the key has no open session: the caller creates
 * one and calls beginTurn. With `currentSince`, a session last active before it is not begun in but returned as
 * expired (the reset policy's check) — for a new turn: a turn begun before (a job recovered later than the bound) is
 * begun again where it began, so a finished one is found finished and none is reset away.
 */
export async function beginTurnInOpenSession(
  sql: Sql,
  turnId: string,
  sessionKey: string,
  fence: number,
  currentSince: number | null = null,
): Promise<OpenedTurn | ExpiredSession | null> {
  const found = await currentSessionActivity(sql, sessionKey);
  if (!found || found.session.endedAt !== null) return null;
  if (currentSince !== null && found.lastActivity < currentSince && !(await getTurn(sql, turnId)))
    return { expired: found.session, lastActivity: found.lastActivity };
  return { session: found.session, ...(await beginTurn(sql, turnId, found.session.id, fence)) };
}

export async function getTurn(sql: Sql, turnId: string): Promise<Turn | null> {
  const row = await sql.get<TurnRow>(SELECT_SQL, [turnId]);
  return row ? toTurn(row) : null;
}

export interface RecordReplyOptions {
  /**
   * Claim it for sending in the same write (the send intent of claimDelivery, counted in `sendAttempts`): for a
   * caller that has made its delivery check already and sends right after the commit.
   */
  claim?: boolean;
}

/**
 * The reply is known but not yet delivered: a re-run delivers this text (and the files it carries) instead of
 * asking the model again. Only a running turn records a reply; run it in the transaction that writes the turn's
 * messages, so a fenced-out worker's transcript is rolled back with it.
 */
export async function recordReply(
  sql: Sql,
  turnId: string,
  reply: string,
  fence: number,
  files: readonly NewTurnFile[] = [],
  { claim = false }: RecordReplyOptions = {},
): Promise<Turn> {
  const record = async (): Promise<Turn> => {
    const turn = await fencedUpdate(sql, turnId, fence, claim ? RECORD_CLAIMED_REPLY : RECORD_REPLY, [reply, files.length]);
    if (!turn) throw new FencedOutError(turnId, fence);
    if (files.length > 0) await addTurnFiles(sql, turnId, files);
    return turn;
  };
  // One statement needs no transaction of its own (the per-message path); with files, all or nothing.
  return files.length === 0 ? record() : sql.transaction(record);
}

/** Throws FencedOutError unless `fence` still owns the turn and it is running (the guard of a progress save). */
export async function assertRunning(sql: Sql, turnId: string, fence: number): Promise<void> {
  const turn = await fencedUpdate(sql, turnId, fence, ASSERT_RUNNING, []);
  if (!turn) throw new FencedOutError(turnId, fence);
}

/**
 * The send intent: claims the recorded reply for sending under `fence` and counts the attempt. Null when there is
 * nothing to send (delivered, interrupted or failed meanwhile). A result with `sendAttempts > 1` means an earlier
 * attempt may have sent (part of) the reply without recording it.
 */
export async function claimDelivery(sql: Sql, turnId: string, fence: number): Promise<Turn | null> {
  return fencedUpdate(sql, turnId, fence, CLAIM_DELIVERY, []);
}

/** The streamed reply's message exists: a re-run writes into it instead of posting the reply again. */
export async function recordStreamMessage(sql: Sql, turnId: string, fence: number, messageId: string): Promise<Turn> {
  return (await fencedUpdate(sql, turnId, fence, RECORD_STREAM_MESSAGE, [messageId])) as Turn;
}

export async function markTurn(sql: Sql, turnId: string, status: TurnStatus, fence: number, error?: string): Promise<Turn> {
  return (await fencedUpdate(sql, turnId, fence, MARK_TURN, [status, error ?? null])) as Turn;
}

/**
 * Takes the turn away from whoever runs it (the watchdog gave up on it): a newer fence and a final status, so
 * the abandoned run's later writes and sends are all refused. False when an even newer fence owns it already, or
 * the turn has ended anyway.
 */
export async function fenceOut(sql: Sql, turnId: string, newFence: number, status: TurnStatus, error: string): Promise<boolean> {
  const res = await sql.run(
    `UPDATE turns SET fence = ?, status = ?, error = ?, updated_at = ?
     WHERE id = ? AND (fence IS NULL OR fence < ?) AND status IN ('running', 'replied')`,
    [newFence, status, error, Date.now(), turnId, newFence],
  );
  return res.changes > 0;
}

/** One data-modifying statement (INSERT, UPDATE or DELETE with `?` parameters, no RETURNING) whose result nobody reads. */
export interface SqlWrite {
  sql: string;
  params: readonly SqlValue[];
  /** How writes of this kind from several turns become one (PostgreSQL's records written together); absent: they cannot. */
  merge?: WriteMerge;
}

/** Writes of one kind (the same `key`) from records written together (record-batches.ts), made one. */
export interface WriteMerge {
  key: string;
  /** One write that does what all of `writes` do; its SQL the same however many they are. */
  merge(writes: readonly SqlWrite[]): SqlWrite;
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

/**
 * PostgreSQL's records of turns finishing together, in one statement (record-batches.ts): `record` takes a record
 * `oneStatement` accepts and answers as recordInOneStatement would.
 */
export interface RecordBatcher {
  record(rec: OneStatementRecord): Promise<Turn>;
}

/** A record PostgreSQL writes in one statement: the reply known up front. */
export type OneStatementRecord = TurnRecord & { reply: string };

export async function recordTurn(sql: Sql, rec: TurnRecord, batches?: RecordBatcher): Promise<Turn> {
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
  const single = { ...rec, reply: replyText };
  return batches ? batches.record(single) : recordInOneStatement(sql, single);
}

/** recordTurn's one statement on PostgreSQL, for one turn. */
export async function recordInOneStatement(sql: Sql, rec: OneStatementRecord): Promise<Turn> {
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
