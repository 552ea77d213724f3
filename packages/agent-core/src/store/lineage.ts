/**
 * Titles in the database: uniqueness (sessions of one compression lineage may share a title, others may not),
 * the next `name #N` of a lineage, and resolving a title to the latest session of its lineage for /resume.
 */
import type { SessionSource } from '../base/types.js';
import { TitleInUseError } from './errors.js';
import { assertSessionExists } from './guards.js';
import { clampLimit } from './limit.js';
import { toSession, type Session, type SessionRow } from './rows.js';
import type { Sql } from './sql.js';
import { isNumberedVariant, nextTitleInLineage, parseLineageTitle, sanitizeTitle } from './titles.js';

const DEFAULT_TITLED_LIMIT = 20;
const MAX_TITLED_LIMIT = 200;

// Sessions holding the title that are neither this session nor an ancestor or descendant of it (through
// parent_session_id). UNION, not UNION ALL, so a corrupt parent cycle cannot loop forever.
// Parameters: id, id, title, id.
const CONFLICT_SQL = `
  WITH RECURSIVE
    ancestors(id) AS (
      SELECT parent_session_id FROM sessions WHERE id = ?
      UNION SELECT s.parent_session_id FROM sessions s JOIN ancestors a ON s.id = a.id
    ),
    descendants(id) AS (
      SELECT id FROM sessions WHERE parent_session_id = ?
      UNION SELECT s.id FROM sessions s JOIN descendants d ON s.parent_session_id = d.id
    )
  SELECT id FROM sessions
  WHERE title = ? AND id != ?
    AND id NOT IN (SELECT id FROM ancestors WHERE id IS NOT NULL)
    AND id NOT IN (SELECT id FROM descendants)
  LIMIT 1`;

// `root` itself and `root #...`; the suffix is checked in code, since LIKE would be case-insensitive.
// Parameters: root, root, root.
const LINEAGE_SQL = `
  SELECT * FROM sessions
  WHERE title = ? OR substr(title, 1, length(CAST(? AS TEXT)) + 2) = CAST(? AS TEXT) || ' #'
  ORDER BY started_at DESC, id DESC`;

/** Must run inside a write transaction. Returns the title as stored. */
export async function setTitleInTx(sql: Sql, sessionId: string, raw: string | null): Promise<string | null> {
  const title = sanitizeTitle(raw);
  await assertSessionExists(sql, sessionId);
  if (title !== null) {
    // Two sessions taking the same title at once must not both pass the check below.
    await sql.lock(`title:${title}`);
    const conflict = await sql.get<{ id: string }>(CONFLICT_SQL, [sessionId, sessionId, title, sessionId]);
    if (conflict) throw new TitleInUseError(title, conflict.id);
  }
  await sql.run('UPDATE sessions SET title = ? WHERE id = ?', [title, sessionId]);
  return title;
}

export async function setTitle(sql: Sql, sessionId: string, raw: string | null): Promise<string | null> {
  return sql.transaction(() => setTitleInTx(sql, sessionId, raw));
}

async function lineageRows(sql: Sql, root: string): Promise<SessionRow[]> {
  const rows = await sql.all<SessionRow>(LINEAGE_SQL, [root, root, root]);
  return rows.filter((r) => r.title === root || (r.title !== null && isNumberedVariant(r.title, root)));
}

/** `base` when unused, else `base #N` one past the highest number in use (a suffix on `base` is ignored). */
export async function nextLineageTitle(sql: Sql, base: string): Promise<string> {
  const clean = sanitizeTitle(base);
  if (clean === null) return '';
  const root = parseLineageTitle(clean).base;
  const titles = (await lineageRows(sql, root)).map((r) => r.title as string);
  return nextTitleInLineage(clean, titles);
}

/**
 * The latest session of the title's lineage: `name` resolves to the newest of `name`, `name #2`, ...;
 * an explicit `name #2` resolves to that session (or its own `name #2 #N` continuations).
 */
export async function resolveTitle(sql: Sql, raw: string): Promise<Session | null> {
  const title = sanitizeTitle(raw);
  if (title === null) return null;
  const rows = await lineageRows(sql, title);
  return rows.length > 0 ? toSession(rows[0]) : null;
}

export async function listTitledSessions(sql: Sql, opts: { source?: SessionSource; limit?: number } = {}): Promise<Session[]> {
  const limit = clampLimit(opts.limit, DEFAULT_TITLED_LIMIT, MAX_TITLED_LIMIT);
  const rows =
    opts.source === undefined
      ? await sql.all<SessionRow>('SELECT * FROM sessions WHERE title IS NOT NULL ORDER BY started_at DESC, id DESC LIMIT ?', [limit])
      : await sql.all<SessionRow>('SELECT * FROM sessions WHERE title IS NOT NULL AND source = ? ORDER BY started_at DESC, id DESC LIMIT ?', [
          opts.source,
          limit,
        ]);
  return rows.map(toSession);
}

/** A parent chain longer than this is a corrupt cycle, not a conversation. */
const MAX_ANCESTRY = 1_000;

const ANCESTRY_SQL = `
  WITH RECURSIVE chain(id, depth) AS (
    SELECT CAST(? AS TEXT), 0
    UNION ALL
    SELECT s.parent_session_id, chain.depth + 1 FROM sessions s JOIN chain ON s.id = chain.id
    WHERE s.parent_session_id IS NOT NULL AND chain.depth < ?
  )
  SELECT s.* FROM chain JOIN sessions s ON s.id = chain.id ORDER BY chain.depth
`;

/** The session, then its parent, grandparent, … (one query; bounded so a corrupt cycle cannot loop). */
export async function ancestry(sql: Sql, id: string): Promise<Session[]> {
  return (await sql.all<SessionRow>(ANCESTRY_SQL, [id, MAX_ANCESTRY])).map(toSession);
}
