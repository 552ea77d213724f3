/**
 * Titles in the database: uniqueness (sessions of one compression lineage may share a title, others may not),
 * the next `name #N` of a lineage, and resolving a title to the latest session of its lineage for /resume.
 */
import type { SessionSource } from '../types.js';
import type { StoreDb } from './db.js';
import { TitleInUseError } from './errors.js';
import { assertSessionExists } from './guards.js';
import { clampLimit } from './limit.js';
import { toSession, type Session, type SessionRow } from './rows.js';
import { isNumberedVariant, nextTitleInLineage, parseLineageTitle, sanitizeTitle } from './titles.js';

export const DEFAULT_TITLED_LIMIT = 20;
export const MAX_TITLED_LIMIT = 200;

// Sessions holding the title that are neither this session nor an ancestor or descendant of it (through
// parent_session_id). UNION, not UNION ALL, so a corrupt parent cycle cannot loop forever.
const CONFLICT_SQL = `
  WITH RECURSIVE
    ancestors(id) AS (
      SELECT parent_session_id FROM sessions WHERE id = :id
      UNION SELECT s.parent_session_id FROM sessions s JOIN ancestors a ON s.id = a.id
    ),
    descendants(id) AS (
      SELECT id FROM sessions WHERE parent_session_id = :id
      UNION SELECT s.id FROM sessions s JOIN descendants d ON s.parent_session_id = d.id
    )
  SELECT id FROM sessions
  WHERE title = :title AND id != :id
    AND id NOT IN (SELECT id FROM ancestors WHERE id IS NOT NULL)
    AND id NOT IN (SELECT id FROM descendants)
  LIMIT 1`;

// `root` itself and `root #...`; the suffix is checked in code, since LIKE would be case-insensitive.
const LINEAGE_SQL = `
  SELECT * FROM sessions
  WHERE title = :root OR substr(title, 1, length(:root) + 2) = :root || ' #'
  ORDER BY started_at DESC, id DESC`;

/** Must run inside a write transaction. Returns the title as stored. */
export function setTitleInTx(db: StoreDb, sessionId: string, raw: string | null): string | null {
  const title = sanitizeTitle(raw);
  assertSessionExists(db, sessionId);
  if (title !== null) {
    const conflict = db.prepare(CONFLICT_SQL).get({ id: sessionId, title }) as { id: string } | undefined;
    if (conflict) throw new TitleInUseError(title, conflict.id);
  }
  db.prepare('UPDATE sessions SET title = ? WHERE id = ?').run(title, sessionId);
  return title;
}

export function setTitle(db: StoreDb, sessionId: string, raw: string | null): string | null {
  return db.write(() => setTitleInTx(db, sessionId, raw));
}

function lineageRows(db: StoreDb, root: string): SessionRow[] {
  const rows = db.read(() => db.prepare(LINEAGE_SQL).all({ root }) as SessionRow[]);
  return rows.filter((r) => r.title === root || (r.title !== null && isNumberedVariant(r.title, root)));
}

/** `base` when unused, else `base #N` one past the highest number in use (a suffix on `base` is ignored). */
export function nextLineageTitle(db: StoreDb, base: string): string {
  const clean = sanitizeTitle(base);
  if (clean === null) return '';
  const root = parseLineageTitle(clean).base;
  const titles = lineageRows(db, root).map((r) => r.title as string);
  return nextTitleInLineage(clean, titles);
}

/**
 * The latest session of the title's lineage: `name` resolves to the newest of `name`, `name #2`, ...;
 * an explicit `name #2` resolves to that session (or its own `name #2 #N` continuations).
 */
export function resolveTitle(db: StoreDb, raw: string): Session | null {
  const title = sanitizeTitle(raw);
  if (title === null) return null;
  const rows = lineageRows(db, title);
  return rows.length > 0 ? toSession(rows[0]) : null;
}

export function listTitledSessions(db: StoreDb, opts: { source?: SessionSource; limit?: number } = {}): Session[] {
  const limit = clampLimit(opts.limit, DEFAULT_TITLED_LIMIT, MAX_TITLED_LIMIT);
  const rows = db.read(() =>
    opts.source === undefined
      ? (db
          .prepare('SELECT * FROM sessions WHERE title IS NOT NULL ORDER BY started_at DESC, id DESC LIMIT ?')
          .all(limit) as SessionRow[])
      : (db
          .prepare(
            'SELECT * FROM sessions WHERE title IS NOT NULL AND source = ? ORDER BY started_at DESC, id DESC LIMIT ?',
          )
          .all(opts.source, limit) as SessionRow[]),
  );
  return rows.map(toSession);
}

/** A parent chain longer than this is a corrupt cycle, not a conversation. */
export const MAX_ANCESTRY = 1_000;

const ANCESTRY_SQL = `
  WITH RECURSIVE chain(id, depth) AS (
    SELECT :id, 0
    UNION ALL
    SELECT s.parent_session_id, chain.depth + 1 FROM sessions s JOIN chain ON s.id = chain.id
    WHERE s.parent_session_id IS NOT NULL AND chain.depth < :max
  )
  SELECT s.* FROM chain JOIN sessions s ON s.id = chain.id ORDER BY chain.depth
`;

/** The session, then its parent, grandparent, … (one query; bounded so a corrupt cycle cannot loop). */
export function ancestry(db: StoreDb, id: string): Session[] {
  return db.read(() => (db.prepare(ANCESTRY_SQL).all({ id, max: MAX_ANCESTRY }) as SessionRow[]).map(toSession));
}
