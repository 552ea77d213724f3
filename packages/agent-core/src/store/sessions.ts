/**
 * Session rows and the key → current session map. A key (`agent:main:telegram:dm:42`) outlives its sessions:
 * /new, resets and compression point it at a fresh session and the old row keeps its transcript.
 */
import crypto from 'node:crypto';
import type { SessionSource } from '../types.js';
import type { StoreDb } from './db.js';
import { InvalidCursorError, StoreNotFoundError } from './errors.js';
import { assertSessionExists } from './guards.js';
import { setTitleInTx } from './lineage.js';
import { clampLimit } from './limit.js';
import { toSession, type Session, type SessionRow } from './rows.js';

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 200;

export interface SessionInit {
  source: SessionSource;
  userId?: string;
  chatId?: string;
  model?: string;
  systemPrompt?: string;
}

export interface NewSessionInit extends SessionInit {
  /** The session this one continues (compression). */
  parentSessionId?: string;
  title?: string;
  /** End the key's current session (if still open) with this reason, in the same transaction. */
  endPreviousReason?: string;
}

export interface UsageDelta {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  costUsd?: number;
  /** Size of the latest prompt; replaces the stored value (it drives auto-compression). */
  lastPromptTokens?: number;
}

export interface ListSessionsOptions {
  source?: SessionSource;
  userId?: string;
  /** true: only open sessions; false: only ended ones; absent: both. */
  active?: boolean;
  cursor?: string;
  limit?: number;
}

export interface SessionPage {
  sessions: Session[];
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

// Monotonic UUIDv7 state (RFC 9562, method 1): a 12-bit counter orders ids created within one millisecond.
const MAX_SEQ_IN_MS = 0xfff;
let lastIdMs = 0;
let seqInMs = 0;

/**
 * A UUIDv7: random, but sorting by id follows creation order (within a process, even inside one
 * millisecond), which keeps "newest first" stable when sessions share a started_at.
 */
export function newSessionId(now: number = Date.now()): string {
  let ms = now;
  if (ms <= lastIdMs) {
    ms = lastIdMs;
    if (++seqInMs > MAX_SEQ_IN_MS) {
      ms++;
      seqInMs = 0;
    }
  } else {
    seqInMs = crypto.randomInt(MAX_SEQ_IN_MS >> 1); // random start, with room to count up
  }
  lastIdMs = ms;
  const bytes = crypto.randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (seqInMs >> 8);
  bytes[7] = seqInMs & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function getSession(db: StoreDb, id: string): Session | null {
  const row = db.read(() => db.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined);
  return row ? toSession(row) : null;
}

function requireSession(db: StoreDb, id: string): Session {
  const session = getSession(db, id);
  if (!session) throw new StoreNotFoundError('session', id);
  return session;
}

export function currentSession(db: StoreDb, key: string): Session | null {
  const row = db.read(
    () =>
      db
        .prepare('SELECT s.* FROM session_keys k JOIN sessions s ON s.id = k.session_id WHERE k.key = ?')
        .get(key) as SessionRow | undefined,
  );
  return row ? toSession(row) : null;
}

function insertSession(db: StoreDb, key: string, init: SessionInit, parentSessionId: string | null): string {
  const now = Date.now();
  const id = newSessionId(now);
  db.prepare(
    `INSERT INTO sessions (id, key, source, user_id, chat_id, model, system_prompt, parent_session_id, started_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    key,
    init.source,
    init.userId ?? null,
    init.chatId ?? null,
    init.model ?? null,
    init.systemPrompt ?? null,
    parentSessionId,
    now,
  );
  db.prepare(
    `INSERT INTO session_keys (key, session_id, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at`,
  ).run(key, id, now);
  return id;
}

/** The key's open session, or a new one the key now points at (atomic across processes). */
export function getOrCreateSession(
  db: StoreDb,
  key: string,
  init: SessionInit,
): { session: Session; created: boolean } {
  return db.write(() => {
    const current = currentSession(db, key);
    if (current && current.endedAt === null) return { session: current, created: false };
    return { session: requireSession(db, insertSession(db, key, init, null)), created: true };
  });
}

export function startNewSession(db: StoreDb, key: string, init: NewSessionInit): Session {
  return db.write(() => {
    if (init.parentSessionId !== undefined) assertSessionExists(db, init.parentSessionId);
    if (init.endPreviousReason !== undefined) {
      const previous = currentSession(db, key);
      if (previous) endSession(db, previous.id, init.endPreviousReason);
    }
    const id = insertSession(db, key, init, init.parentSessionId ?? null);
    if (init.title !== undefined) setTitleInTx(db, id, init.title);
    return requireSession(db, id);
  });
}

/** Marks the session ended; the first end wins, so a late duplicate does not rewrite why it ended. */
export function endSession(db: StoreDb, id: string, reason: string): Session {
  return db.write(() => {
    const row = db
      .prepare(
        `UPDATE sessions
         SET ended_at = coalesce(ended_at, ?), end_reason = CASE WHEN ended_at IS NULL THEN ? ELSE end_reason END
         WHERE id = ? RETURNING *`,
      )
      .get(Date.now(), reason, id) as SessionRow | undefined;
    if (!row) throw new StoreNotFoundError('session', id);
    return toSession(row);
  });
}

export function addUsage(db: StoreDb, sessionId: string, u: UsageDelta): void {
  db.write(() => {
    const result = db
      .prepare(
        `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
           cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
           estimated_cost_usd = estimated_cost_usd + ?, last_prompt_tokens = coalesce(?, last_prompt_tokens)
         WHERE id = ?`,
      )
      .run(u.input, u.output, u.cacheRead, u.cacheWrite, u.costUsd ?? 0, u.lastPromptTokens ?? null, sessionId);
    if (result.changes === 0) throw new StoreNotFoundError('session', sessionId);
  });
}

/** Sets one plain column; `column` is never user input. */
export function setSessionField(
  db: StoreDb,
  id: string,
  column: 'model' | 'system_prompt',
  value: string | null,
): void {
  db.write(() => {
    const result = db.prepare(`UPDATE sessions SET ${column} = ? WHERE id = ?`).run(value, id);
    if (result.changes === 0) throw new StoreNotFoundError('session', id);
  });
}

function encodeCursor(s: Session): string {
  return Buffer.from(JSON.stringify([s.startedAt, s.id])).toString('base64url');
}

function decodeCursor(cursor: string): [number, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isInteger(value[0]) && typeof value[1] === 'string') {
      return [value[0] as number, value[1] as string];
    }
  } catch {
    // fall through: not ours
  }
  throw new InvalidCursorError(cursor);
}

/** Newest first, paged on (started_at, id) so sessions created while paging neither repeat nor go missing. */
export function listSessions(db: StoreDb, opts: ListSessionsOptions = {}): SessionPage {
  const limit = clampLimit(opts.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.source !== undefined) {
    where.push('source = ?');
    params.push(opts.source);
  }
  if (opts.userId !== undefined) {
    where.push('user_id = ?');
    params.push(opts.userId);
  }
  if (opts.active !== undefined) where.push(opts.active ? 'ended_at IS NULL' : 'ended_at IS NOT NULL');
  if (opts.cursor !== undefined) {
    where.push('(started_at, id) < (?, ?)');
    params.push(...decodeCursor(opts.cursor));
  }
  const sql = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
               ORDER BY started_at DESC, id DESC LIMIT ?`;
  const rows = db.read(() => db.prepare(sql).all(...params, limit + 1) as SessionRow[]);
  const sessions = rows.slice(0, limit).map(toSession);
  const nextCursor = rows.length > limit ? encodeCursor(sessions[sessions.length - 1]) : null;
  return { sessions, nextCursor };
}
