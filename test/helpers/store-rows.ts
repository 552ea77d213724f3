/** Reading a test gateway's SQLite file (read-only) for what a test must check in the store. */
import Database from 'better-sqlite3';

export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  apiCalls: number;
}

/** `read` on the store file opened read-only, on a connection of its own (WAL lets it read while the gateway writes). */
export function readStoreFile<T>(dbPath: string, read: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** User messages whose text contains `marker`. */
export function storedUserMessages(dbPath: string, marker: string): Array<{ content: string; attachments: string | null }> {
  return readStoreFile(
    dbPath,
    (db) =>
      db.prepare("SELECT content, attachments FROM messages WHERE role = 'user' AND content LIKE ?").all(`%${marker}%`) as Array<{
        content: string;
        attachments: string | null;
      }>,
  );
}

const USAGE_COLUMNS = `s.input_tokens AS inputTokens, s.output_tokens AS outputTokens, s.cache_read_tokens AS cacheReadTokens,
  s.cache_write_tokens AS cacheWriteTokens, s.estimated_cost_usd AS costUsd, s.api_calls + coalesce(c.api_calls, 0) AS apiCalls`;

/**
 * The tokens, cost and model calls of a session: the one a stored user message containing `marker` belongs to, or
 * (`{ chat }`) the one of a platform chat — a session may hold no message (a files-only answer stores none).
 */
export function sessionUsage(dbPath: string, of: { marker: string } | { source: string; chat: string }): SessionUsage | undefined {
  return readStoreFile(dbPath, (db) =>
    'marker' in of
      ? (db
          .prepare(
            `SELECT ${USAGE_COLUMNS} FROM sessions s JOIN messages m ON m.session_id = s.id LEFT JOIN session_counters c ON c.session_id = s.id WHERE m.role = 'user' AND m.content LIKE ?`,
          )
          .get(`%${of.marker}%`) as SessionUsage | undefined)
      : (db
          .prepare(`SELECT ${USAGE_COLUMNS} FROM sessions s LEFT JOIN session_counters c ON c.session_id = s.id WHERE s.source = ? AND s.chat_id = ?`)
          .get(of.source, of.chat) as SessionUsage | undefined),
  );
}
