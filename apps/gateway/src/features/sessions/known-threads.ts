/**
 * The threads the bot takes part in (Discord and Slack: replies there need no mention), with when each was last
 * used, so retention can forget the ones nobody writes in any more (features/sessions/retention.ts). The table is the
 * store's `known_threads`; this module adds `last_seen_at` through a registered migration and keeps it current.
 */
import { registerMigrations, type Sql } from '@herald/agent-core';

/**
 * 150: above the gateway's other migrations (140 pairing, 141 counters) with room between. Its index on
 * turns.updated_at is replaced by one on created_at in migration 151 (retention.ts).
 */
const RETENTION_MIGRATION_VERSION = 150;
const RETENTION_SCHEMA = `
ALTER TABLE known_threads ADD COLUMN last_seen_at INTEGER;
CREATE INDEX IF NOT EXISTS turns_updated ON turns (updated_at);
`;
registerMigrations({ version: RETENTION_MIGRATION_VERSION, name: 'retention: thread last use, turns by age', sql: RETENTION_SCHEMA });

/**
 * A thread is looked up on every message it gets; its last use is written at most this often, so a busy thread
 * costs one write a day, not one per message. Retention counts in days, so the day of slack changes nothing.
 */
const THREAD_TOUCH_EVERY_MS = 24 * 3600_000;

/** A row's last use: the latest touch, or its creation for a row never touched (rows older than the migration). */
const LAST_USED = 'COALESCE(last_seen_at, created_at)';

export class KnownThreads {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  /** The view one adapter gets (DiscordIngressOptions.threads, SlackIngressOptions.threads). */
  of(platform: string): { has(threadId: string): Promise<boolean>; add(threadId: string): Promise<void> } {
    return { has: (id) => this.has(platform, id), add: (id) => this.add(platform, id) };
  }

  /** True when the bot takes part in the thread; counts as a use. */
  async has(platform: string, threadId: string): Promise<boolean> {
    const row = await this.sql.get<{ last_used: number | string }>(`SELECT ${LAST_USED} AS last_used FROM known_threads WHERE platform = ? AND thread_id = ?`, [
      platform,
      threadId,
    ]);
    if (!row) return false;
    const at = this.now();
    if (at - Number(row.last_used) >= THREAD_TOUCH_EVERY_MS) {
      await this.sql.run('UPDATE known_threads SET last_seen_at = ? WHERE platform = ? AND thread_id = ?', [at, platform, threadId]);
    }
    return true;
  }

  /** Remembers a thread the bot joined or opened (again: a use). */
  async add(platform: string, threadId: string): Promise<void> {
    const at = this.now();
    await this.sql.run(
      `INSERT INTO known_threads (platform, thread_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (platform, thread_id) DO UPDATE SET last_seen_at = excluded.last_seen_at`,
      [platform, threadId, at, at],
    );
  }

  /** Forgets threads not used since `cutoff` (ms); returns how many. */
  async forgetUnusedSince(cutoff: number): Promise<number> {
    return (await this.sql.run(`DELETE FROM known_threads WHERE ${LAST_USED} < ?`, [cutoff])).changes;
  }
}
