/**
 * A session's transcript: appending (idempotent per turn), reading back, and truncating for /retry and /undo.
 * The session's message_count and tool_call_count move in the same transaction as the rows they count.
 */
import type { ChatMessage } from '../types.js';
import type { StoreDb } from './db.js';
import { assertSessionExists } from './guards.js';
import { toChatMessage, toStoredMessage, type MessageRow, type StoredMessage } from './rows.js';

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
}

export interface GetMessagesOptions {
  /** Only messages with a larger id (to page through a long transcript). */
  afterId?: number;
  limit?: number;
}

const INSERT_SQL = `
  INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name, finish_reason, reasoning,
                        platform_message_id, turn_id, seq, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (session_id, turn_id, seq) DO NOTHING
  RETURNING *`;
const EXISTING_SQL = 'SELECT * FROM messages WHERE session_id = ? AND turn_id = ? AND seq = ?';
const COUNT_SQL = `
  UPDATE sessions SET message_count = message_count + ?, tool_call_count = tool_call_count + ? WHERE id = ?`;

function toolCallCount(m: ChatMessage): number {
  return m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0;
}

/** Appends in one transaction and returns the stored rows, in input order (existing rows for repeats). */
export function appendMessages(
  db: StoreDb,
  sessionId: string,
  messages: readonly ChatMessage[],
  opts: AppendOptions = {},
): StoredMessage[] {
  if (messages.length === 0) return [];
  const turnId = opts.turnId ?? null;
  const firstSeq = opts.firstSeq ?? 0;
  return db.write(() => {
    assertSessionExists(db, sessionId);
    const now = Date.now();
    const stored: StoredMessage[] = [];
    let added = 0;
    let toolCalls = 0;
    messages.forEach((m, index) => {
      const seq = turnId === null ? null : firstSeq + index;
      const calls = m.tool_calls && m.tool_calls.length > 0 ? JSON.stringify(m.tool_calls) : null;
      let row = db
        .prepare(INSERT_SQL)
        .get(
          sessionId,
          m.role,
          m.content,
          calls,
          m.tool_call_id ?? null,
          m.tool_name ?? null,
          m.finish_reason ?? null,
          m.reasoning ?? null,
          opts.platformMessageId ?? null,
          turnId,
          seq,
          now,
        ) as MessageRow | undefined;
      if (row) {
        added++;
        toolCalls += toolCallCount(m);
      } else {
        row = db.prepare(EXISTING_SQL).get(sessionId, turnId, seq) as MessageRow;
      }
      stored.push(toStoredMessage(row));
    });
    if (added > 0) db.prepare(COUNT_SQL).run(added, toolCalls, sessionId);
    return stored;
  });
}

export function getMessages(db: StoreDb, sessionId: string, opts: GetMessagesOptions = {}): StoredMessage[] {
  const limit = opts.limit === undefined ? -1 : Math.max(0, Math.floor(opts.limit));
  const rows = db.read(
    () =>
      db
        .prepare('SELECT * FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?')
        .all(sessionId, opts.afterId ?? 0, limit) as MessageRow[],
  );
  return rows.map(toStoredMessage);
}

/** The transcript in the internal message format, oldest first, ready to send to a provider. */
export function getHistory(db: StoreDb, sessionId: string): ChatMessage[] {
  return getMessages(db, sessionId).map(toChatMessage);
}

/**
 * Deletes `messageId` and every later message of the session; returns how many went. A message id from
 * another session deletes nothing.
 */
export function deleteMessagesFrom(db: StoreDb, sessionId: string, messageId: number): number {
  return db.write(() => {
    const doomed = db
      .prepare(
        `SELECT count(*) AS n,
                coalesce(sum(CASE WHEN role = 'assistant' AND tool_calls IS NOT NULL
                                  THEN json_array_length(tool_calls) ELSE 0 END), 0) AS calls
         FROM messages
         WHERE session_id = ? AND id >= ? AND EXISTS (SELECT 1 FROM messages WHERE id = ? AND session_id = ?)`,
      )
      .get(sessionId, messageId, messageId, sessionId) as { n: number; calls: number };
    if (doomed.n === 0) return 0;
    db.prepare('DELETE FROM messages WHERE session_id = ? AND id >= ?').run(sessionId, messageId);
    db.prepare(
      `UPDATE sessions SET message_count = max(0, message_count - ?), tool_call_count = max(0, tool_call_count - ?)
       WHERE id = ?`,
    ).run(doomed.n, doomed.calls, sessionId);
    return doomed.n;
  });
}
