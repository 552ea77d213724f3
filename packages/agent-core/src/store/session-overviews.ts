/**
 * Sessions as an operator lists them (the console): each row with what tells it apart at a glance — the start of
 * its first user message, the user's display name, when it was last active. One query per page: two correlated
 * sub-selects per row, each a short walk of the messages_session index (session_id, id), on SQLite and PostgreSQL.
 */
import { clampLimit } from './limit.js';
import { toSession, type Session, type SessionRow } from './rows.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, encodeCursor, sessionsWhere, type ListSessionsOptions } from './sessions.js';
import type { Sql } from './sql.js';

/** Characters of the first user message returned for a preview (callers shorten it further). */
export const PREVIEW_CHARS = 200;

export interface SessionOverview extends Session {
  /** The user's display name on the platform, as their first message gave it; null when none was sent. */
  userName: string | null;
  /** The first PREVIEW_CHARS characters of the first user message with text; null before there is one. */
  firstUserText: string | null;
  /** The newest message's time, else when the session started. */
  lastActivityAt: number;
}

export interface SessionOverviewPage {
  sessions: SessionOverview[];
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

type OverviewRow = SessionRow & { user_name?: string | null; first_user_text: string | null; last_message_at: number | string | null };

const OVERVIEW_COLUMNS = `s.*,
  (SELECT substr(m.content, 1, ${PREVIEW_CHARS}) FROM messages m
   WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL AND m.content <> '' ORDER BY m.id LIMIT 1) AS first_user_text,
  (SELECT m.created_at FROM messages m WHERE m.session_id = s.id ORDER BY m.id DESC LIMIT 1) AS last_message_at`;

function toOverview(r: OverviewRow): SessionOverview {
  const session = toSession(r);
  return {
    ...session,
    userName: r.user_name ?? null,
    firstUserText: r.first_user_text,
    lastActivityAt: r.last_message_at === null ? session.startedAt : Number(r.last_message_at),
  };
}

/** A page of sessions, newest first, with the same filters and cursor as listSessions. */
export async function listSessionOverviews(sql: Sql, opts: ListSessionsOptions = {}): Promise<SessionOverviewPage> {
  const limit = clampLimit(opts.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
  const { where, params } = sessionsWhere(opts, 's.');
  const rows = await sql.all<OverviewRow>(`SELECT ${OVERVIEW_COLUMNS} FROM sessions s ${where} ORDER BY s.started_at DESC, s.id DESC LIMIT ?`, [
    ...params,
    limit + 1,
  ]);
  const sessions = rows.slice(0, limit).map(toOverview);
  return { sessions, nextCursor: rows.length > limit ? encodeCursor(sessions[sessions.length - 1]) : null };
}

/** These sessions (search hits' sessions, say) in one query; ids that are not there are left out. */
export async function sessionOverviewsByIds(sql: Sql, ids: readonly string[]): Promise<SessionOverview[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const rows = await sql.all<OverviewRow>(`SELECT ${OVERVIEW_COLUMNS} FROM sessions s WHERE s.id IN (${unique.map(() => '?').join(', ')})`, unique);
  return rows.map(toOverview);
}

export async function getSessionOverview(sql: Sql, id: string): Promise<SessionOverview | null> {
  const row = await sql.get<OverviewRow>(`SELECT ${OVERVIEW_COLUMNS} FROM sessions s WHERE s.id = ?`, [id]);
  return row ? toOverview(row) : null;
}
