/**
 * A session's transcript: appending (idempotent per turn), reading back, and truncating for /retry and /undo.
 * The session's message_count and tool_call_count move in the same transaction as the rows they count.
 */
import type { ChatMessage } from '../base/types.js';
import { referencingSession } from './guards.js';
import { addUsage, usageParams, usageSql, type UsageDelta } from './sessions.js';
import { CHAT_COLUMNS, toChatMessage, toStoredMessage, type ChatRow, type MessageRow, type StoredMessage } from './rows.js';
import { StoreNotFoundError } from './errors.js';
import type { Sql, SqlValue } from './sql.js';

export interface AppendOptions {
  /**
   * The turn these messages belong to. Messages are then keyed by (session, turn, position in the turn), so a
   * turn that is persisted again after a worker crash writes each message once.
   */
  turnId?: string;
  /**
   * Position of the first message within the turn (default 0). Pass it when one turn is persisted over several
   * calls (e.g. the user message first, the agent's messages later), otherwise later calls count as repeats.
   */
  firstSeq?: number;
  /** Stored on every message of this call: append the platform's message on its own when you set it. */
  platformMessageId?: string;
  /** The turn's usage, added to the session in the same write as its message counts. */
  usage?: UsageDelta;
}

export interface GetMessagesOptions {
  /** Only messages with a larger id (to page through a long transcript). */
  afterId?: number;
  limit?: number;
}

const INSERT_COLUMNS = `session_id, role, content, tool_calls, tool_call_id, tool_name, finish_reason, reasoning,
  attachments, reasoning_details, platform_message_id, turn_id, seq, created_at`;
const INSERT_COLUMN_NAMES = INSERT_COLUMNS.split(',').map((c) => c.trim());
const ROW_PLACEHOLDERS = `(${INSERT_COLUMN_NAMES.map(() => '?').join(', ')})`;
/** Rows per INSERT: 14 parameters each, well inside SQLite's 32,766 and PostgreSQL's 65,535. */
export const INSERT_CHUNK = 500;
/** Each insert's text, by row count (at most INSERT_CHUNK): built once, not on every turn (then hashed again to find its statement). */
const insertSqlByRows: string[] = [];
/** The insert of `n` messages, one statement (a turn's messages are one round, not one per message). */
const insertSql = (n: number): string =>
  (insertSqlByRows[n] ??= `INSERT INTO messages (${INSERT_COLUMNS}) VALUES ${Array.from({ length: n }, () => ROW_PLACEHOLDERS).join(', ')}
  ON CONFLICT (session_id, turn_id, seq) DO NOTHING RETURNING *`);
const EXISTING_SQL = 'SELECT * FROM messages WHERE session_id = ? AND turn_id = ? AND seq >= ? AND seq <= ?';
const COUNT_SQL = `
  UPDATE sessions SET message_count = message_count + ?, tool_call_count = tool_call_count + ?, last_active = ? WHERE id = ?`;

/** PostgreSQL, in a CTE after the insert `ins`: the rows it added and their tool calls (toolCallCount, in SQL). */
const ADDED = '(SELECT count(*) FROM ins)';
const ADDED_TOOL_CALLS = `(SELECT coalesce(sum(json_array_length(tool_calls::json)), 0) FROM ins WHERE role = 'assistant' AND tool_calls IS NOT NULL)`;
const ADDED_COUNTS = `message_count = message_count + ${ADDED}, tool_call_count = tool_call_count + ${ADDED_TOOL_CALLS}, `;
/**
 * PostgreSQL: the insert of `n` messages (`ins`) and the session's counts and usage (`upd`, returning the id of the
 * session it found) as two CTEs of one statement: one round trip instead of two. Parameters: countedInsertParams.
 */
const countedCtesByRows = new Map<string, string>();
export function countedInsertCtes(n: number, usage: boolean): string {
  const cacheKey = `${n}:${usage}`;
  let text = countedCtesByRows.get(cacheKey);
  if (text === undefined) {
    const update = usage ? usageSql(ADDED_COUNTS) : `UPDATE sessions SET ${ADDED_COUNTS}last_active = ? WHERE id = ? AND EXISTS (SELECT 1 FROM ins)`;
    text = `ins AS (${insertSql(n)}), upd AS (${update} RETURNING id)`;
    countedCtesByRows.set(cacheKey, text);
  }
  return text;
}

/** The stored rows come back with `session_rows`: the sessions the update found (0: no such session). */
const appendCountedSqlByRows = new Map<string, string>();
function appendCountedSql(n: number, usage: boolean): string {
  const cacheKey = `${n}:${usage}`;
  let text = appendCountedSqlByRows.get(cacheKey);
  if (text === undefined) {
    text = `WITH ${countedInsertCtes(n, usage)} SELECT ins.*, (SELECT count(*) FROM upd) AS session_rows FROM ins`;
    appendCountedSqlByRows.set(cacheKey, text);
  }
  return text;
}

/** countedInsertCtes' parameters for these messages (at most INSERT_CHUNK). */
export function countedInsertParams(sessionId: string, messages: readonly ChatMessage[], opts: AppendOptions): SqlValue[] {
  const params = chunkValues(sessionId, messages, opts, 0, Date.now());
  if (opts.usage) params.push(...usageParams(opts.usage), sessionId);
  else params.push(Date.now(), sessionId);
  return params;
}

function toolCallCount(m: ChatMessage): number {
  return m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0;
}

function rowValues(sessionId: string, m: ChatMessage, turnId: string | null, seq: number | null, platformMessageId: string | null, now: number): SqlValue[] {
  return [
    sessionId,
    m.role,
    m.content,
    m.tool_calls && m.tool_calls.length > 0 ? JSON.stringify(m.tool_calls) : null,
    m.tool_call_id ?? null,
    m.tool_name ?? null,
    m.finish_reason ?? null,
    m.reasoning ?? null,
    // References only: image bytes (m.images) are for the request that carried them and are never stored.
    m.attachments && m.attachments.length > 0 ? JSON.stringify(m.attachments) : null,
    m.reasoning_details && m.reasoning_details.length > 0 ? JSON.stringify(m.reasoning_details) : null,
    platformMessageId,
    turnId,
    seq,
    now,
  ];
}

/**
 * Appends in one transaction and returns the stored rows, in input order (existing rows for repeats). The messages
 * go in with one INSERT per INSERT_CHUNK; a turn's repeats (a re-run after a crash) are skipped by the unique
 * (session, turn, seq) index and read back in one SELECT. On PostgreSQL, a turn's messages (one chunk) and the
 * session's counts and usage are one statement, atomic by itself.
 */
export async function appendMessages(sql: Sql, sessionId: string, messages: readonly ChatMessage[], opts: AppendOptions = {}): Promise<StoredMessage[]> {
  if (messages.length === 0) return [];
  // A session that does not exist fails the first insert (its foreign key): no read to check it first.
  if (sql.dialect === 'postgres' && messages.length <= INSERT_CHUNK) return referencingSession(sessionId, () => appendCounted(sql, sessionId, messages, opts));
  return referencingSession(sessionId, () =>
    sql.transaction(async () => {
      const now = Date.now();
      const stored: StoredMessage[] = [];
      let added = 0;
      let toolCalls = 0;
      for (let from = 0; from < messages.length; from += INSERT_CHUNK) {
        const chunk = messages.slice(from, from + INSERT_CHUNK);
        const params = chunkValues(sessionId, chunk, opts, from, now);
        const inserted = await sql.all<MessageRow>(insertSql(chunk.length), params);
        added += inserted.length;
        const rows = await inOrder(sql, sessionId, chunk, opts, from, inserted);
        toolCalls += rows.toolCalls;
        for (const r of rows.rows) stored.push(toStoredMessage(r));
      }
      if (opts.usage) await addUsage(sql, sessionId, opts.usage, { messages: added, toolCalls });
      else if (added > 0) await sql.run(COUNT_SQL, [added, toolCalls, Date.now(), sessionId]);
      return stored;
    }),
  );
}

/** PostgreSQL, at most INSERT_CHUNK messages: the insert and the session's counts (and usage) in one statement. */
async function appendCounted(sql: Sql, sessionId: string, messages: readonly ChatMessage[], opts: AppendOptions): Promise<StoredMessage[]> {
  const inserted = await sql.all<MessageRow & { session_rows: number }>(
    appendCountedSql(messages.length, opts.usage !== undefined),
    countedInsertParams(sessionId, messages, opts),
  );
  // The usage names a session that is gone (addUsage's check); rows went in only if it exists (the foreign key).
  if (opts.usage && inserted.length > 0 && Number(inserted[0].session_rows) === 0) throw new StoreNotFoundError('session', sessionId);
  return (await inOrder(sql, sessionId, messages, opts, 0, inserted)).rows.map(toStoredMessage);
}

/** One chunk's parameters; `from`: the chunk's first message's index in the call (for its seq). */
function chunkValues(sessionId: string, chunk: readonly ChatMessage[], opts: AppendOptions, from: number, now: number): SqlValue[] {
  const turnId = opts.turnId ?? null;
  const firstSeq = (opts.firstSeq ?? 0) + from;
  return chunk.flatMap((m, i) => rowValues(sessionId, m, turnId, turnId === null ? null : firstSeq + i, opts.platformMessageId ?? null, now));
}

/** The columns of a message row and their PostgreSQL types, for rows read from JSON: seq and created_at numbers, the rest text. */
const INSERT_COLUMN_TYPES = INSERT_COLUMN_NAMES.map((c) => `${c} ${c === 'seq' || c === 'created_at' ? 'bigint' : 'text'}`).join(', ');
/**
 * PostgreSQL: the insert of messages given as one JSON array of rows (messageRowObjects), in the array's order; for a
 * statement that writes the messages of several turns (record-batches.ts). One parameter: the JSON.
 */
export const INSERT_FROM_JSON_SQL = `INSERT INTO messages (${INSERT_COLUMNS})
  SELECT ${INSERT_COLUMNS} FROM ROWS FROM (json_to_recordset(?::json) AS (${INSERT_COLUMN_TYPES})) WITH ORDINALITY AS m(${INSERT_COLUMNS}, ord)
  ORDER BY ord
  ON CONFLICT (session_id, turn_id, seq) DO NOTHING RETURNING session_id, role, tool_calls`;
/** PostgreSQL, after INSERT_FROM_JSON_SQL as `ins`: by session, the rows it added and their tool calls (as ADDED_COUNTS). */
export const ADDED_BY_SESSION_SQL = `SELECT session_id, count(*) AS messages,
  coalesce(sum(json_array_length(tool_calls::json)) FILTER (WHERE role = 'assistant' AND tool_calls IS NOT NULL), 0) AS tool_calls
  FROM ins GROUP BY session_id`;
/** INSERT_FROM_JSON_SQL's rows for one turn's messages, each an object by column, as appendMessages would insert them. */
export function messageRowObjects(sessionId: string, messages: readonly ChatMessage[], opts: AppendOptions): Array<Record<string, SqlValue>> {
  const values = chunkValues(sessionId, messages, opts, 0, Date.now());
  const width = INSERT_COLUMN_NAMES.length;
  return messages.map((_, i) => Object.fromEntries(INSERT_COLUMN_NAMES.map((c, j) => [c, values[i * width + j]])));
}

/** A chunk's stored rows in input order (repeats read back), and the tool calls of the rows it added. */
async function inOrder(
  sql: Sql,
  sessionId: string,
  chunk: readonly ChatMessage[],
  opts: AppendOptions,
  from: number,
  inserted: MessageRow[],
): Promise<{ rows: MessageRow[]; toolCalls: number }> {
  const turnId = opts.turnId ?? null;
  if (turnId === null) {
    // No turn: nothing can repeat, every row went in; ids grow in the order of the VALUES.
    return { rows: inserted.sort((a, b) => Number(a.id) - Number(b.id)), toolCalls: chunk.reduce((n, m) => n + toolCallCount(m), 0) };
  }
  const seqOf = (i: number): number => (opts.firstSeq ?? 0) + from + i;
  const bySeq = new Map(inserted.map((r) => [Number(r.seq), r]));
  let toolCalls = 0;
  for (const [i, m] of chunk.entries()) if (bySeq.has(seqOf(i))) toolCalls += toolCallCount(m);
  if (bySeq.size < chunk.length) {
    const existing = await sql.all<MessageRow>(EXISTING_SQL, [sessionId, turnId, seqOf(0), seqOf(chunk.length - 1)]);
    for (const r of existing) if (!bySeq.has(Number(r.seq))) bySeq.set(Number(r.seq), r);
  }
  return { rows: chunk.map((_, i) => bySeq.get(seqOf(i)) as MessageRow), toolCalls };
}

export async function getMessages(sql: Sql, sessionId: string, opts: GetMessagesOptions = {}): Promise<StoredMessage[]> {
  const base = 'SELECT * FROM messages WHERE session_id = ? AND id > ? ORDER BY id';
  const rows =
    opts.limit === undefined
      ? await sql.all<MessageRow>(base, [sessionId, opts.afterId ?? 0])
      : await sql.all<MessageRow>(`${base} LIMIT ?`, [sessionId, opts.afterId ?? 0, Math.max(0, Math.floor(opts.limit))]);
  return rows.map(toStoredMessage);
}

const HISTORY_SQL = `SELECT ${CHAT_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id`;
/**
 * getTurnHistory's columns, for a statement that reads the rows with other things (open-session-turn.ts, the turn's
 * begin); `turnId` is where the statement has the turn's id (a parameter, or a column).
 */
export const turnHistoryColumns = (turnId: string): string => `${CHAT_COLUMNS}, seq, CASE WHEN turn_id = ${turnId} THEN 1 ELSE 0 END AS mine`;
const TURN_HISTORY_COLUMNS = turnHistoryColumns('?');

const TURN_HISTORY_SQL = `SELECT ${TURN_HISTORY_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id`;

/** The transcript in the internal message format, oldest first, ready to send to a provider. */
export async function getHistory(sql: Sql, sessionId: string): Promise<ChatMessage[]> {
  const rows = await sql.all<ChatRow>(HISTORY_SQL, [sessionId]);
  return rows.map(toChatMessage);
}

/** A turn's transcript: what came before it, and what an earlier run of the same turn saved (getTurnHistory). */
export interface TurnHistory {
  history: ChatMessage[];
  saved: ChatMessage[];
}

export type TurnHistoryRow = ChatRow & { seq: number | null; mine: number };

/**
 * The transcript of a turn that runs again: what came before it, and what an earlier run of the same turn saved
 * (its progress checkpoints), in the order it was written. One read on every turn's path: the turn's own rows are
 * told apart in SQL (`mine`), so no turn id is read back.
 */
export async function getTurnHistory(sql: Sql, sessionId: string, turnId: string): Promise<TurnHistory> {
  return toTurnHistory(await sql.all<TurnHistoryRow>(TURN_HISTORY_SQL, [turnId, sessionId]));
}

/** getTurnHistory's rows, oldest first, split into the history and this turn's saved work. */
export function toTurnHistory(rows: readonly TurnHistoryRow[]): TurnHistory {
  const history: ChatMessage[] = [];
  const saved: TurnHistoryRow[] = [];
  for (const r of rows) {
    if (Number(r.mine) === 1) saved.push(r);
    else history.push(toChatMessage(r));
  }
  saved.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  return { history, saved: saved.map(toChatMessage) };
}

/** When the session's newest message was written (ms), or null when it has none. One indexed row. */
export async function lastMessageAt(sql: Sql, sessionId: string): Promise<number | null> {
  const row = await sql.get<{ created_at: number }>('SELECT created_at FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1', [sessionId]);
  return row ? row.created_at : null;
}

/**
 * Deletes `messageId` and every later message of the session; returns how many went. A message id from
 * another session deletes nothing.
 */
export async function deleteMessagesFrom(sql: Sql, sessionId: string, messageId: number): Promise<number> {
  return sql.transaction(async () => {
    const doomed = await sql.all<{ role: string; tool_calls: string | null }>(
      `SELECT role, tool_calls FROM messages
       WHERE session_id = ? AND id >= ? AND EXISTS (SELECT 1 FROM messages WHERE id = ? AND session_id = ?)`,
      [sessionId, messageId, messageId, sessionId],
    );
    if (doomed.length === 0) return 0;
    const calls = doomed.reduce((n, m) => n + (m.role === 'assistant' && m.tool_calls ? (JSON.parse(m.tool_calls) as unknown[]).length : 0), 0);
    await sql.run('DELETE FROM messages WHERE session_id = ? AND id >= ?', [sessionId, messageId]);
    await sql.run(
      `UPDATE sessions SET message_count = CASE WHEN message_count > ? THEN message_count - ? ELSE 0 END,
         tool_call_count = CASE WHEN tool_call_count > ? THEN tool_call_count - ? ELSE 0 END
       WHERE id = ?`,
      [doomed.length, doomed.length, calls, calls, sessionId],
    );
    return doomed.length;
  });
}
