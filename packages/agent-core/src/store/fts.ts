/**
 * Full-text search over messages with each database's own machinery: FTS5 on SQLite (bm25 rank, `snippet()`),
 * tsvector/tsquery on PostgreSQL (a GIN index, `ts_rank_cd`, `ts_headline`). Both answer in the same shape,
 * hits marked `>>>` and `<<<`, best first.
 */
import { profileFilter } from './sessions.js';
import type { SessionSource, Role } from '../types.js';
import { sanitizeFtsQuery, tsQueryOf } from './fts-query.js';
import { clampLimit } from './limit.js';
import { PG_TSVECTOR } from './schema.js';
import type { Sql, SqlValue } from './sql.js';

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;
/** Tokens of context around a hit. */
const SNIPPET_TOKENS = 16;
export const SNIPPET_OPEN = '>>>';
export const SNIPPET_CLOSE = '<<<';

export interface SearchOptions {
  source?: SessionSource;
  userId?: string;
  /** Only sessions of this agent profile (see sessions.ts profileFilter). */
  profile?: string;
  limit?: number;
}

export interface SearchHit {
  sessionId: string;
  source: SessionSource;
  title: string | null;
  messageId: number;
  role: Role;
  /** The matching passage, hits wrapped in `>>>` and `<<<`. */
  snippet: string;
  createdAt: number;
}

interface SearchRow {
  session_id: string;
  source: SessionSource;
  title: string | null;
  message_id: number;
  role: Role;
  snippet: string;
  created_at: number;
}

const COLUMNS = 'm.session_id, s.source, s.title, m.id AS message_id, m.role, m.created_at';

const SQLITE_SEARCH = (filters: string): string => `
  SELECT ${COLUMNS},
         snippet(messages_fts, 0, '${SNIPPET_OPEN}', '${SNIPPET_CLOSE}', '...', ${SNIPPET_TOKENS}) AS snippet
  FROM messages_fts
  JOIN messages m ON m.id = messages_fts.rowid
  JOIN sessions s ON s.id = m.session_id
  WHERE messages_fts MATCH ? ${filters}
  ORDER BY rank, m.id DESC
  LIMIT ?`;

// ts_headline is costly, so PostgreSQL evaluates it only for the rows that survive the LIMIT.
const HEADLINE_OPTIONS = `StartSel=${SNIPPET_OPEN}, StopSel=${SNIPPET_CLOSE}, MaxWords=${SNIPPET_TOKENS}, MinWords=4, ShortWord=0, MaxFragments=1, FragmentDelimiter=" ... "`;
const POSTGRES_SEARCH = (filters: string): string => `
  WITH q AS (SELECT to_tsquery('simple', ?) AS query)
  SELECT ${COLUMNS},
         ts_headline('simple', coalesce(m.content, ''), q.query, '${HEADLINE_OPTIONS}') AS snippet
  FROM q, messages m
  JOIN sessions s ON s.id = m.session_id
  WHERE ${PG_TSVECTOR.replace('content', 'm.content')} @@ q.query ${filters}
  ORDER BY ts_rank_cd(${PG_TSVECTOR.replace('content', 'm.content')}, q.query) DESC, m.id DESC
  LIMIT ?`;

/** Best matches first; an empty or unsearchable query finds nothing rather than failing. */
export async function searchMessages(sql: Sql, query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
  const match = sql.dialect === 'sqlite' ? sanitizeFtsQuery(query) : tsQueryOf(query);
  if (match === '') return [];
  const limit = clampLimit(opts.limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
  const filters: string[] = [];
  const params: SqlValue[] = [match];
  if (opts.source) {
    filters.push('s.source = ?');
    params.push(opts.source);
  }
  if (opts.userId !== undefined) {
    filters.push('s.user_id = ?');
    params.push(opts.userId);
  }
  if (opts.profile !== undefined) {
    filters.push(profileFilter('s.'));
    params.push(opts.profile, opts.profile);
  }
  params.push(limit);
  const where = filters.map((f) => `AND ${f}`).join(' ');
  const rows = await sql.all<SearchRow>(sql.dialect === 'sqlite' ? SQLITE_SEARCH(where) : POSTGRES_SEARCH(where), params);
  return rows.map((r) => ({
    sessionId: r.session_id,
    source: r.source,
    title: r.title,
    messageId: r.message_id,
    role: r.role,
    snippet: r.snippet,
    createdAt: r.created_at,
  }));
}
