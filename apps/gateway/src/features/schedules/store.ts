/**
 * Scheduled tasks in the session store (SQLite or PostgreSQL, one table on both): the record of what each task
 * is, where it was created and whose it is. BullMQ's job scheduler in Redis does the timing; this table is what
 * survives a Redis that lost its data (workers put a missing scheduler back at start-up, features/schedules/service.ts), and
 * what owners and the admin API list and cancel.
 */
import { randomBytes } from 'node:crypto';
import { registerMigrations, type Sql, whereOf } from '@herald/agent-core';
import type { ScheduleWhen } from './timing.js';

const SCHEDULES_MIGRATION_VERSION = 300;
const SCHEDULES_SCHEMA = `
CREATE TABLE IF NOT EXISTS schedules (
  id               TEXT PRIMARY KEY,
  platform         TEXT NOT NULL,
  owner_id         TEXT NOT NULL,
  owner_name       TEXT,
  conversation_id  TEXT NOT NULL,
  chat_type        TEXT NOT NULL,
  chat_id          TEXT NOT NULL,
  thread_id        TEXT,
  session_key      TEXT NOT NULL,
  session_mode     TEXT NOT NULL CHECK (session_mode IN ('own', 'origin')),
  kind             TEXT NOT NULL CHECK (kind IN ('cron', 'once')),
  cron             TEXT,
  run_at           INTEGER,
  timezone         TEXT NOT NULL,
  prompt           TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('active', 'done', 'cancelled')),
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  last_run_at      INTEGER,
  run_count        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS schedules_owner ON schedules (platform, owner_id, status);
CREATE INDEX IF NOT EXISTS schedules_status ON schedules (status, created_at);
`;
registerMigrations({ version: SCHEDULES_MIGRATION_VERSION, name: 'scheduled tasks', sql: SCHEDULES_SCHEMA });
/** A task runs under the agent profile, and replies through the bot account, of the message that set it. */
const SCHEDULES_PROFILE_MIGRATION_VERSION = 500;
registerMigrations({
  version: SCHEDULES_PROFILE_MIGRATION_VERSION,
  name: 'scheduled tasks: profile and bot account',
  sql: 'ALTER TABLE schedules ADD COLUMN profile TEXT;\nALTER TABLE schedules ADD COLUMN account TEXT;',
});

export type ScheduleStatus = 'active' | 'done' | 'cancelled';
export type SessionMode = 'own' | 'origin';

/** Where a task was created: its chat (where it delivers) and its owner. Plain JSON, as in a mailbox entry. */
export interface ScheduleOrigin {
  platform: string;
  ownerId: string;
  ownerName?: string;
  conversationId: string;
  chatType: string;
  chatId: string;
  threadId?: string;
  /** The chat's session key: due turns go through its mailbox, so they queue behind the user's own. */
  sessionKey: string;
  /** The agent profile the task runs under (absent: the default profile). */
  profile?: string;
  /** The bot account its answers go out through (absent: the platform's default one). */
  account?: string;
}

/** The chat and user of a message (an InboundMessage or a mailbox payload): where a task set from it belongs. */
export function scheduleOrigin(
  m: {
    platform: string;
    userId: string;
    userName?: string;
    conversationId: string;
    chatType: string;
    chatId: string;
    threadId?: string;
    profile?: string;
    account?: string;
  },
  sessionKey: string,
): ScheduleOrigin {
  return {
    platform: m.platform,
    ownerId: m.userId,
    ownerName: m.userName,
    conversationId: m.conversationId,
    chatType: m.chatType,
    chatId: m.chatId,
    threadId: m.threadId,
    sessionKey,
    ...(m.profile !== undefined && { profile: m.profile }),
    ...(m.account !== undefined && { account: m.account }),
  };
}

/**
 * The session a scheduled task runs in when it has one of its own: the chat's key plus the task, so its transcript
 * stays out of the conversation (and one task's runs share one history). Its turns still go through the chat's
 * mailbox, so they queue behind the user's own.
 */
export function scheduleSessionKey(chatSessionKey: string, scheduleId: string): string {
  return `${chatSessionKey}:schedule:${scheduleId}`;
}

export interface Schedule extends ScheduleOrigin {
  id: string;
  sessionMode: SessionMode;
  when: ScheduleWhen;
  timeZone: string;
  prompt: string;
  status: ScheduleStatus;
  createdAt: number;
  updatedAt: number;
  lastRunAt: number | null;
  runCount: number;
}

interface Row {
  id: string;
  platform: string;
  owner_id: string;
  owner_name: string | null;
  conversation_id: string;
  chat_type: string;
  chat_id: string;
  thread_id: string | null;
  session_key: string;
  session_mode: SessionMode;
  kind: 'cron' | 'once';
  cron: string | null;
  run_at: number | string | null;
  timezone: string;
  prompt: string;
  status: ScheduleStatus;
  created_at: number | string;
  updated_at: number | string;
  last_run_at: number | string | null;
  run_count: number | string;
  profile: string | null;
  account: string | null;
}

// PostgreSQL returns BIGINT as text.
const num = (v: number | string): number => Number(v);
const numOrNull = (v: number | string | null): number | null => (v === null ? null : Number(v));

function fromRow(r: Row): Schedule {
  return {
    id: r.id,
    platform: r.platform,
    ownerId: r.owner_id,
    ownerName: r.owner_name ?? undefined,
    conversationId: r.conversation_id,
    chatType: r.chat_type,
    chatId: r.chat_id,
    threadId: r.thread_id ?? undefined,
    sessionKey: r.session_key,
    sessionMode: r.session_mode,
    when: r.kind === 'cron' ? { kind: 'cron', cron: r.cron ?? '' } : { kind: 'once', runAt: num(r.run_at ?? 0) },
    timeZone: r.timezone,
    prompt: r.prompt,
    status: r.status,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    lastRunAt: numOrNull(r.last_run_at),
    runCount: num(r.run_count),
    ...(r.profile !== null && { profile: r.profile }),
    ...(r.account !== null && { account: r.account }),
  };
}

/** Short, unambiguous ids a person can type into `/schedules cancel <id>`. */
const ID_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
function newScheduleId(): string {
  return [...randomBytes(8)].map((b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');
}

export interface NewSchedule {
  origin: ScheduleOrigin;
  sessionMode: SessionMode;
  when: ScheduleWhen;
  timeZone: string;
  prompt: string;
}

export interface ScheduleFilter {
  status?: ScheduleStatus;
  platform?: string;
  ownerId?: string;
  conversationId?: string;
  limit?: number;
}

export class ScheduleStore {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  async create(s: NewSchedule): Promise<Schedule> {
    const id = newScheduleId();
    const at = this.now();
    const o = s.origin;
    await this.sql.run(
      `INSERT INTO schedules (id, platform, owner_id, owner_name, conversation_id, chat_type, chat_id, thread_id, session_key,
         session_mode, kind, cron, run_at, timezone, prompt, status, created_at, updated_at, run_count, profile, account)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, 0, ?, ?)`,
      [
        id,
        o.platform,
        o.ownerId,
        o.ownerName ?? null,
        o.conversationId,
        o.chatType,
        o.chatId,
        o.threadId ?? null,
        o.sessionKey,
        s.sessionMode,
        s.when.kind,
        s.when.kind === 'cron' ? s.when.cron : null,
        s.when.kind === 'once' ? s.when.runAt : null,
        s.timeZone,
        s.prompt,
        at,
        at,
        o.profile ?? null,
        o.account ?? null,
      ],
    );
    return (await this.get(id)) as Schedule;
  }

  async get(id: string): Promise<Schedule | null> {
    const row = await this.sql.get<Row>('SELECT * FROM schedules WHERE id = ?', [id]);
    return row ? fromRow(row) : null;
  }

  /** Newest first. */
  async list(filter: ScheduleFilter = {}): Promise<Schedule[]> {
    const { where, params } = whereOf([
      ['status = ?', filter.status],
      ['platform = ?', filter.platform],
      ['owner_id = ?', filter.ownerId],
      ['conversation_id = ?', filter.conversationId],
    ]);
    const rows = await this.sql.all<Row>(`SELECT * FROM schedules ${where} ORDER BY created_at DESC, id LIMIT ?`, [...params, filter.limit ?? 100]);
    return rows.map(fromRow);
  }

  async countActive(platform: string, ownerId: string): Promise<number> {
    const row = await this.sql.get<{ n: number | string }>("SELECT COUNT(*) AS n FROM schedules WHERE platform = ? AND owner_id = ? AND status = 'active'", [
      platform,
      ownerId,
    ]);
    return Number(row?.n ?? 0);
  }

  /** Active → cancelled; false when it was not active (done, cancelled already, or unknown). */
  async cancel(id: string): Promise<boolean> {
    const res = await this.sql.run("UPDATE schedules SET status = 'cancelled', updated_at = ? WHERE id = ? AND status = 'active'", [this.now(), id]);
    return res.changes === 1;
  }

  /**
   * Counts the run due at `runAt` once (a job run again after a crash does not count twice); a one-off is done
   * with it. False when the task is no longer active or this run was counted already.
   */
  async recordRun(id: string, runAt: number): Promise<boolean> {
    const res = await this.sql.run(
      `UPDATE schedules SET run_count = run_count + 1, last_run_at = ?, updated_at = ?,
         status = CASE WHEN kind = 'once' THEN 'done' ELSE status END
       WHERE id = ? AND status = 'active' AND (last_run_at IS NULL OR last_run_at < ?)`,
      [runAt, this.now(), id, runAt],
    );
    return res.changes === 1;
  }
}
