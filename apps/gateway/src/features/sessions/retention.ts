/**
 * What the store forgets, so it does not grow forever. Once an hour one worker (a Redis lock, as the janitor
 * does it) deletes:
 *  - turns (the outbox: each answer's delivery record) finished — delivered, interrupted or failed — more than
 *    HERALD_TURN_RETENTION_DAYS ago. A turn only matters while its job could still run again; that is minutes
 *    (a redelivered message is dropped by the mailbox for an hour, see SEEN_AFTER_DONE_S). Unfinished turns
 *    (running, replied) are kept whatever their age: they are the record a re-run needs.
 *  - known threads nobody wrote in for HERALD_THREAD_RETENTION_DAYS (last use: known-threads.ts). Forgetting one
 *    only means the bot waits for a mention there again, as in a thread it never joined.
 * Messages are the transcript and are kept (sessions, /resume, search); the full-text index follows them.
 */
import { registerMigrations, type SessionStore } from '@herald/agent-core';
import type { Redis } from 'ioredis';
import type { Logger } from '../../support/logger.js';
import type { KnownThreads } from './known-threads.js';

/**
 * Retention finds old turns by when they were created, not by their last update (issue 18): `updated_at` changes
 * on every write a turn makes (running, replied, delivered), and each change moved the row's entry in an index on it
 * — index pages written again in every one of a turn's commits (on PostgreSQL, no HOT update of the row either).
 * `created_at` is written once; the rows deleted are the same (OLD_FINISHED_TURNS_SQL). The index on `session_id`
 * goes too: no query reads turns by session (they are read by id), and it served only a session's deletion, which
 * Herald never does (an operator deleting one by hand has its turns found by a scan of a table retention keeps
 * short); every new turn wrote a page of it.
 */
const TURNS_BY_CREATION_MIGRATION_VERSION = 151;
const TURNS_BY_CREATION_SCHEMA = `
DROP INDEX IF EXISTS turns_updated;
DROP INDEX IF EXISTS turns_session;
CREATE INDEX IF NOT EXISTS turns_created ON turns (created_at);
`;
registerMigrations({ version: TURNS_BY_CREATION_MIGRATION_VERSION, name: 'retention: turns by creation', sql: TURNS_BY_CREATION_SCHEMA });

/**
 * Finished turns not updated since the cutoff, a batch of them: found through the index on created_at (a turn is
 * created before its last update, so `created_at < cutoff` holds for every row `updated_at < cutoff` picks).
 * Parameters: cutoff, cutoff, batch size.
 */
export const OLD_FINISHED_TURNS_SQL = `SELECT id FROM turns WHERE created_at < ? AND updated_at < ? AND status IN ('delivered', 'interrupted', 'failed') LIMIT ?`;

const RETENTION_INTERVAL_MS = 3600_000;
const DAY_MS = 24 * 3600_000;
/** Rows per DELETE, so a first run over a large, old table never holds the database for long. */
const DELETE_BATCH = 1_000;
/** The first sweep waits a little after start-up, out of the way of a busy start. */
const FIRST_SWEEP_AFTER_MS = 60_000;

export interface RetentionOptions {
  redis: Redis;
  prefix: string;
  store: SessionStore;
  threads: KnownThreads;
  log: Logger;
  /** 0 keeps them forever. */
  turnRetentionDays: number;
  threadRetentionDays: number;
  intervalMs?: number;
  now?: () => number;
}

export interface RetentionResult {
  turns: number;
  threads: number;
}

export class StoreRetention {
  private timers: NodeJS.Timeout[] = [];
  private running: Promise<unknown> | null = null;

  constructor(private readonly opts: RetentionOptions) {}

  start(): void {
    const every = this.opts.intervalMs ?? RETENTION_INTERVAL_MS;
    const tick = (): void => {
      this.running ??= this.sweep()
        .catch((err: unknown) => this.opts.log.warn({ err }, 'retention sweep failed'))
        .finally(() => (this.running = null));
    };
    this.timers = [setTimeout(tick, Math.min(FIRST_SWEEP_AFTER_MS, every)), setInterval(tick, every)];
    for (const t of this.timers) t.unref();
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    await this.running;
  }

  /** Deletes what is past retention; null when another worker swept within the interval. */
  async sweep(): Promise<RetentionResult | null> {
    const { redis, prefix, turnRetentionDays, threadRetentionDays } = this.opts;
    const every = this.opts.intervalMs ?? RETENTION_INTERVAL_MS;
    if ((await redis.set(`${prefix}:retention`, '1', 'PX', every, 'NX')) !== 'OK') return null;
    const now = (this.opts.now ?? Date.now)();
    const turns = turnRetentionDays > 0 ? await this.deleteFinishedTurns(now - turnRetentionDays * DAY_MS) : 0;
    const threads = threadRetentionDays > 0 ? await this.opts.threads.forgetUnusedSince(now - threadRetentionDays * DAY_MS) : 0;
    if (turns > 0 || threads > 0) this.opts.log.info({ turns, threads }, 'retention: deleted old turn records and unused threads');
    return { turns, threads };
  }

  private async deleteFinishedTurns(cutoff: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const { changes } = await this.opts.store.sql.run(`DELETE FROM turns WHERE id IN (${OLD_FINISHED_TURNS_SQL})`, [cutoff, cutoff, DELETE_BATCH]);
      deleted += changes;
      if (changes < DELETE_BATCH) return deleted;
    }
  }
}
