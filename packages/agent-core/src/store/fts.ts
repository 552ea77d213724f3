/**
 * Full-text search over messages with each database's own machinery: FTS5 on SQLite (bm25 rank, `snippet()`),
 * tsvector/tsquery on PostgreSQL (a GIN index, `ts_rank_cd`, `ts_headline`). Both answer in the same shape,
 * hits marked `>>>` and `<<<`, best first.
 */
import { profileFilter } from './sessions.js';
import type { SessionSource, Role } from '../base/types.js';
import { sanitizeFtsQuery, tsQueryOf } from './fts-query.js';
import { clampLimit } from './limit.js';
import { PG_TSVECTOR } from './schema.js';
import type { Sql, SqlValue } from './sql.js';

const DEFAULT_SEARCH_LIMIT = 20;
const MAX_SEARCH_LIMIT = 100;
/** Tokens of context around a hit. */
const SNIPPET_TOKENS = 16;
const SNIPPET_OPEN = '>>>';
const SNIPPET_CLOSE = '<<<';

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

/** Messages indexed per transaction: a batch holds the write lock for a few milliseconds at most. */
const SEARCH_INDEX_BATCH_ROWS = 1_000;

const INDEXED_UPTO = `SELECT indexed_upto FROM search_index_progress WHERE name = 'messages'`;

/**
 * SQLite: adds the messages written since the last call to the search index (at most `maxRows`, oldest first) and
 * returns how many it added. The index is written in batches rather than by a trigger per message (schema.ts,
 * SEARCH_INDEX_IN_BATCHES). Nothing to add costs two reads and no write. PostgreSQL keeps its own index: 0.
 */
export async function indexNewMessages(sql: Sql, maxRows = SEARCH_INDEX_BATCH_ROWS): Promise<number> {
  if (sql.dialect !== 'sqlite') return 0;
  const newest = async (): Promise<number> => (await sql.get<{ id: number | null }>('SELECT max(id) AS id FROM messages'))?.id ?? 0;
  const upto = async (): Promise<number> => (await sql.get<{ indexed_upto: number }>(INDEXED_UPTO))?.indexed_upto ?? 0;
  if (!sql.inTransaction && (await upto()) >= (await newest())) return 0;
  return sql.transaction(async () => {
    // Read again under the write lock: another process (or this one's search) may have indexed them meanwhile.
    const from = await upto();
    const batch = await sql.get<{ last: number | null; n: number }>(
      'SELECT max(id) AS last, count(*) AS n FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?)',
      [from, maxRows],
    );
    if (!batch?.last) return 0;
    await sql.run('INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages WHERE id > ? AND id <= ?', [from, batch.last]);
    await sql.run(`UPDATE search_index_progress SET indexed_upto = ? WHERE name = 'messages'`, [batch.last]);
    return batch.n;
  });
}

/** Indexes every message written so far, a batch per transaction (a search calls it first, so it misses nothing). */
export async function catchUpSearchIndex(sql: Sql): Promise<number> {
  let total = 0;
  for (let n = await indexNewMessages(sql); n > 0; n = await indexNewMessages(sql)) total += n;
  return total;
}

/** Best matches first; an empty or unsearchable query finds nothing rather than failing. */
export async function searchMessages(sql: Sql, query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
  const match = sql.dialect === 'sqlite' ? sanitizeFtsQuery(query) : tsQueryOf(query);
  if (match === '') return [];
  await catchUpSearchIndex(sql);
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
