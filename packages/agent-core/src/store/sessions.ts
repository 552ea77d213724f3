/**
 * Session rows and the key → current session map. A key (`agent:main:telegram:dm:42`) outlives its sessions:
 * /new, resets and compression point it at a fresh session and the old row keeps its transcript.
 */
import crypto from 'node:crypto';
import type { SessionSource } from '../base/types.js';
import { InvalidCursorError, StoreNotFoundError } from './errors.js';
import { assertSessionExists } from './guards.js';
import { setTitleInTx } from './lineage.js';
import { clampLimit } from './limit.js';
import { toSession, type Session, type SessionRow } from './rows.js';
import type { Sql, SqlValue } from './sql.js';

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 200;

export interface SessionInit {
  source: SessionSource;
  userId?: string;
  chatId?: string;
  model?: string;
  systemPrompt?: string;
  /** The agent profile (gateway); absent or null: the default profile. */
  profile?: string | null;
  /** The user's display name on the platform when it sent one (shown by the console; the id stays the identity). */
  userName?: string | null;
  /** How the system prompt was built (the gateway's prompt builder), kept with the new session in `session_prompts`. */
  prompt?: SessionPromptRecord;
}

/** A session's prompt record: its personality and the layers (names, sizes, sources) the prompt was built from. */
export interface SessionPromptRecord {
  personality: string | null;
  layers: readonly unknown[];
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
  /** What providers reported the calls cost themselves (`Usage.reportedCostUsd`); absent when none did. */
  actualCostUsd?: number;
  /** Size of the latest prompt; replaces the stored value (it drives auto-compression). */
  lastPromptTokens?: number;
  /** Model calls the usage came from (retries, fallbacks, side tasks included). */
  apiCalls?: number;
}

export interface ListSessionsOptions {
  source?: SessionSource;
  userId?: string;
  /** Only this profile's sessions (`default` also finds sessions recorded without one). */
  profile?: string;
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

export async function getSession(sql: Sql, id: string): Promise<Session | null> {
  const row = await sql.get<SessionRow>('SELECT * FROM sessions WHERE id = ?', [id]);
  return row ? toSession(row) : null;
}

async function requireSession(sql: Sql, id: string): Promise<Session> {
  const session = await getSession(sql, id);
  if (!session) throw new StoreNotFoundError('session', id);
  return session;
}

/**
 * The session id a key points at, as a scalar subquery: SQLite runs `sessions WHERE id = (subquery)` as two index
 * look-ups, ≈ 5 µs, where the same as a JOIN took ≈ 45 µs (measured on SQLite 3.54, on every message's path).
 */
export const SESSION_OF_KEY = 'SELECT session_id FROM session_keys WHERE key = ?';

export async function currentSession(sql: Sql, key: string): Promise<Session | null> {
  const row = await sql.get<SessionRow>(`SELECT * FROM sessions WHERE id = (${SESSION_OF_KEY})`, [key]);
  return row ? toSession(row) : null;
}

/**
 * The session the key points at and when it was last used (its newest message, else when it started): one read
 * for the check every incoming message makes (the session reset policy).
 */
/** A session `s`'s last activity: its newest message's time, else its start. */
export const LAST_ACTIVITY_OF_S = 'coalesce((SELECT m.created_at FROM messages m WHERE m.session_id = s.id ORDER BY m.id DESC LIMIT 1), s.started_at)';

export async function currentSessionActivity(sql: Sql, key: string): Promise<{ session: Session; lastActivity: number } | null> {
  const row = await sql.get<SessionRow & { last_activity: number }>(
    `SELECT s.*, ${LAST_ACTIVITY_OF_S} AS last_activity FROM sessions s WHERE s.id = (${SESSION_OF_KEY})`,
    [key],
  );
  if (!row) return null;
  return { session: toSession(row), lastActivity: Number(row.last_activity) };
}

/** A new session's columns and, in the same order, its values: 13 parameters (see sessionParams). */
const SESSION_COLUMNS = 'id, key, source, user_id, chat_id, model, system_prompt, parent_session_id, started_at, last_active, profile, user_name';
export const SESSION_VALUES = '?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, (SELECT p.user_name FROM sessions p WHERE p.id = ?))';
/** Inserts a session from `source` (a VALUES list or a SELECT of SESSION_VALUES) and returns it. */
export const insertSessionSql = (source: string): string => `INSERT INTO sessions (${SESSION_COLUMNS}) ${source} RETURNING *`;
const INSERT_SESSION_SQL = insertSessionSql(`VALUES (${SESSION_VALUES})`);
const POINT_KEY_SQL = `INSERT INTO session_keys (key, session_id, updated_at) VALUES (?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, updated_at = excluded.updated_at`;
const PROMPT_INSERT = 'INSERT INTO session_prompts (session_id, personality, layers, created_at)';
/** A second record for the same session is ignored (a re-run turn). */
const PROMPT_CONFLICT = 'ON CONFLICT (session_id) DO NOTHING';
const RECORD_PROMPT_SQL = `${PROMPT_INSERT} VALUES (?, ?, ?, ?) ${PROMPT_CONFLICT}`;
/** The prompt record of the session `s` of the statement it is a CTE of (3 parameters: promptParams). */
export const RECORD_PROMPT_CTE = `p AS (${PROMPT_INSERT} SELECT s.id, ?, ?, ? FROM s ${PROMPT_CONFLICT})`;
/** PostgreSQL: the new session and the key pointing at it in one statement (one round trip instead of two). */
const INSERT_SESSION_AND_KEY_SQL = `WITH s AS (${INSERT_SESSION_SQL}), k AS (${POINT_KEY_SQL}) SELECT * FROM s`;
/** … and the session's prompt record. */
const INSERT_SESSION_KEY_AND_PROMPT_SQL = `WITH s AS (${INSERT_SESSION_SQL}), k AS (${POINT_KEY_SQL}), ${RECORD_PROMPT_CTE} SELECT * FROM s`;

/** SESSION_VALUES' parameters for a new session `id` of `key`. */
export function sessionParams(id: string, key: string, init: SessionInit, parentSessionId: string | null, now: number): SqlValue[] {
  return [
    id,
    key,
    init.source,
    init.userId ?? null,
    init.chatId ?? null,
    init.model ?? null,
    init.systemPrompt ?? null,
    parentSessionId,
    now,
    now,
    init.profile ?? null,
    // A continuation (compression) keeps its parent's user name unless told another.
    init.userName ?? null,
    parentSessionId,
  ];
}

/** RECORD_PROMPT_CTE's parameters. */
export const promptParams = (prompt: SessionPromptRecord, now: number): SqlValue[] => [prompt.personality, JSON.stringify(prompt.layers), now];

/** Keeps how a session's prompt was built; a second record for the same session is ignored. */
export async function recordSessionPrompt(sql: Sql, sessionId: string, prompt: SessionPromptRecord, now = Date.now()): Promise<void> {
  await sql.run(RECORD_PROMPT_SQL, [sessionId, ...promptParams(prompt, now)]);
}

/** A new session, the key pointed at it and its prompt record (when given); returns the session as stored. */
async function insertSession(sql: Sql, key: string, init: SessionInit, parentSessionId: string | null): Promise<Session> {
  const now = Date.now();
  const id = newSessionId(now);
  const params = sessionParams(id, key, init, parentSessionId, now);
  const keyParams = [key, id, now];
  const { prompt } = init;
  if (sql.dialect === 'postgres') {
    const row = prompt
      ? await sql.get<SessionRow>(INSERT_SESSION_KEY_AND_PROMPT_SQL, [...params, ...keyParams, ...promptParams(prompt, now)])
      : await sql.get<SessionRow>(INSERT_SESSION_AND_KEY_SQL, [...params, ...keyParams]);
    return toSession(row as SessionRow);
  }
  const row = await sql.get<SessionRow>(INSERT_SESSION_SQL, params);
  await sql.run(POINT_KEY_SQL, keyParams);
  if (prompt) await recordSessionPrompt(sql, id, prompt, now);
  return toSession(row as SessionRow);
}

/** The lock that serialises the transactions that move one key (two processes must not both create its next session). */
export const keyLockName = (key: string): string => `session-key:${key}`;

function lockKey(sql: Sql, key: string): Promise<void> {
  return sql.lock(keyLockName(key));
}

/**
 * The key's open session, or a new one the key now points at (atomic across processes). `init` may be a function:
 * it is called only when the session is created (a system prompt need not be built for every message of an open one).
 */
export async function getOrCreateSession(
  sql: Sql,
  key: string,
  init: SessionInit | (() => SessionInit),
  opts: GetOrCreateOptions = {},
): Promise<{ session: Session; created: boolean }> {
  // The common case needs no write transaction: the key's session is open.
  const open = sql.inTransaction || opts.noneOpen ? null : await currentSession(sql, key);
  if (open && open.endedAt === null) return { session: open, created: false };
  return sql.transaction(async () => {
    await lockKey(sql, key);
    const current = await currentSession(sql, key);
    if (current && current.endedAt === null) return { session: current, created: false };
    const fields = typeof init === 'function' ? init() : init;
    return { session: await insertSession(sql, key, fields, null), created: true };
  });
}

export interface GetOrCreateOptions {
  /** The caller has just found no open session for the key: go straight to the (locked) check and create. */
  noneOpen?: boolean;
}

export async function startNewSession(sql: Sql, key: string, init: NewSessionInit): Promise<Session> {
  return sql.transaction(async () => {
    await lockKey(sql, key);
    if (init.parentSessionId !== undefined) await assertSessionExists(sql, init.parentSessionId);
    if (init.endPreviousReason !== undefined) {
      const previous = await currentSession(sql, key);
      if (previous) await endSession(sql, previous.id, init.endPreviousReason);
    }
    const session = await insertSession(sql, key, init, init.parentSessionId ?? null);
    if (init.title === undefined) return session;
    await setTitleInTx(sql, session.id, init.title);
    return requireSession(sql, session.id);
  });
}

/** Marks the session ended; the first end wins, so a late duplicate does not rewrite why it ended. */
export async function endSession(sql: Sql, id: string, reason: string): Promise<Session> {
  const row = await sql.get<SessionRow>(
    `UPDATE sessions
     SET ended_at = coalesce(ended_at, ?), end_reason = CASE WHEN ended_at IS NULL THEN ? ELSE end_reason END
     WHERE id = ? RETURNING *`,
    [Date.now(), reason, id],
  );
  if (!row) throw new StoreNotFoundError('session', id);
  return toSession(row);
}

/**
 * The usage columns' SET list: `v` names each of the delta's values where it is used (a parameter, or a column of
 * rows read from JSON), `own` qualifies the session's own columns. actual_cost_usd stays NULL until a provider reports
 * a cost: coalesce(a + x, x, a) adds, starts, or keeps it.
 */
export const usageSet = (v: (name: keyof UsageValues) => string, own = ''): string => `input_tokens = ${own}input_tokens + ${v('input')},
  output_tokens = ${own}output_tokens + ${v('output')}, cache_read_tokens = ${own}cache_read_tokens + ${v('cache_read')}, cache_write_tokens = ${own}cache_write_tokens + ${v('cache_write')},
  total_tokens = ${own}total_tokens + ${v('total')}, estimated_cost_usd = ${own}estimated_cost_usd + ${v('cost')},
  actual_cost_usd = coalesce(${own}actual_cost_usd + ${v('actual')}, ${v('actual')}, ${own}actual_cost_usd), last_active = ${v('at')},
  last_prompt_tokens = coalesce(${v('last_prompt')}, ${own}last_prompt_tokens), api_calls = ${own}api_calls + ${v('api_calls')}`;

/** The session's usage update; `countSet` adds to the message counts too. Parameters: usageParams, then the id. */
export const usageSql = (countSet: string): string => `UPDATE sessions SET ${countSet}${usageSet(() => '?')}
  WHERE id = ?`;
/** The values usageSet's placeholders take, in their order (one may stand twice), read off usageSet itself. */
const USAGE_PARAM_ORDER: Array<keyof UsageValues> = [];
usageSet((name) => {
  USAGE_PARAM_ORDER.push(name);
  return '?';
});
/** The two forms, built once (the per-message path runs the second). */
const USAGE_SQL = usageSql('');
const USAGE_WITH_COUNTS_SQL = usageSql('message_count = message_count + ?, tool_call_count = tool_call_count + ?, ');

/** A delta's values by name, as usageSet reads them. */
export type UsageValues = ReturnType<typeof usageValues>;

/** A delta's values by name (usageSet's). */
export function usageValues(u: UsageDelta) {
  return {
    input: u.input,
    output: u.output,
    cache_read: u.cacheRead,
    cache_write: u.cacheWrite,
    total: u.input + u.output + u.cacheRead + u.cacheWrite,
    cost: u.costUsd ?? 0,
    actual: u.actualCostUsd ?? null,
    at: Date.now(),
    last_prompt: u.lastPromptTokens ?? null,
    api_calls: u.apiCalls ?? 0,
  };
}

/** UsageValues' PostgreSQL types, for deltas read from JSON (record-batches.ts): its names, read off usageValues. */
export const USAGE_VALUE_TYPES = Object.keys(usageValues({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }))
  .map((name) => `${name} ${name === 'cost' || name === 'actual' ? 'double precision' : 'bigint'}`)
  .join(', ');

/** usageSql's parameters for one delta (the session's id follows them), in usageSet's order. */
export function usageParams(u: UsageDelta): SqlValue[] {
  const v = usageValues(u);
  return USAGE_PARAM_ORDER.map((name) => v[name]);
}

/**
 * Adds a turn's usage to the session; with `counts`, its new messages and tool calls too, in the same statement
 * (the per-message path writes the session row once).
 */
export async function addUsage(sql: Sql, sessionId: string, u: UsageDelta, counts?: { messages: number; toolCalls: number }): Promise<void> {
  const result = await sql.run(counts ? USAGE_WITH_COUNTS_SQL : USAGE_SQL, [
    ...(counts ? [counts.messages, counts.toolCalls] : []),
    ...usageParams(u),
    sessionId,
  ]);
  if (result.changes === 0) throw new StoreNotFoundError('session', sessionId);
}

/** Sets one plain column; `column` is never user input. */
export async function setSessionField(sql: Sql, id: string, column: 'model' | 'system_prompt', value: string | null): Promise<void> {
  const result = await sql.run(`UPDATE sessions SET ${column} = ? WHERE id = ?`, [value, id]);
  if (result.changes === 0) throw new StoreNotFoundError('session', id);
}

export function encodeCursor(s: Pick<Session, 'startedAt' | 'id'>): string {
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

/** The WHERE clause (empty, or starting with WHERE) and its parameters for a page of sessions; `alias` as in profileFilter. */
export function sessionsWhere(opts: ListSessionsOptions, alias = ''): { where: string; params: SqlValue[] } {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (opts.source !== undefined) {
    where.push(`${alias}source = ?`);
    params.push(opts.source);
  }
  if (opts.userId !== undefined) {
    where.push(`${alias}user_id = ?`);
    params.push(opts.userId);
  }
  if (opts.profile !== undefined) {
    where.push(profileFilter(alias));
    params.push(opts.profile, opts.profile);
  }
  if (opts.active !== undefined) where.push(opts.active ? `${alias}ended_at IS NULL` : `${alias}ended_at IS NOT NULL`);
  if (opts.cursor !== undefined) {
    where.push(`(${alias}started_at, ${alias}id) < (?, ?)`);
    params.push(...decodeCursor(opts.cursor));
  }
  return { where: where.length ? `WHERE ${where.join(' AND ')}` : '', params };
}

/** Newest first, paged on (started_at, id) so sessions created while paging neither repeat nor go missing. */
export async function listSessions(sql: Sql, opts: ListSessionsOptions = {}): Promise<SessionPage> {
  const limit = clampLimit(opts.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
  const { where, params } = sessionsWhere(opts);
  const query = `SELECT * FROM sessions ${where}
                 ORDER BY started_at DESC, id DESC LIMIT ?`;
  const rows = await sql.all<SessionRow>(query, [...params, limit + 1]);
  const sessions = rows.slice(0, limit).map(toSession);
  const nextCursor = rows.length > limit ? encodeCursor(sessions[sessions.length - 1]) : null;
  return { sessions, nextCursor };
}

/**
 * SQL matching one profile's sessions (two parameters, both the profile name): the default profile's sessions
 * include those recorded before profiles existed (profile NULL). `alias`: the sessions table's alias and a dot.
 */
export function profileFilter(alias: string): string {
  return `(${alias}profile = ? OR (? = 'default' AND ${alias}profile IS NULL))`;
}
