/**
 * Scheduled tasks: what the `schedule` tool, the `/schedules` command and the admin API call. A task is a row in
 * the store (features/schedules/store.ts) plus a BullMQ job scheduler with the task's id in Redis, which makes one job per
 * due run — whichever worker takes it, the run happens once (features/schedules/runner.ts).
 *   cron:  a scheduler with the pattern and the task's time zone;
 *   once:  a scheduler that starts at the time and runs once (`limit: 1`), removed after its run.
 * The store is the record: at start-up a worker puts back any scheduler Redis lost, and removes any whose task
 * is no longer active (a cancel that reached the store but not Redis).
 */
import type { Queue, RepeatOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../../support/logger.js';
import type { Schedule, ScheduleFilter, ScheduleOrigin, ScheduleStore, SessionMode } from './store.js';
import { ScheduleInputError, isTimeZone, nextCronRuns, resolveWhen } from './timing.js';

export const SCHEDULE_QUEUE = 'schedules';
const MAX_PROMPT_CHARS = 4_000;
/** A one-off's scheduler repeats "every" this long, but only once (`limit: 1`): the interval never comes round. */
const ONCE_EVERY_MS = 10 * 366 * 24 * 3600_000;
/** Retries of a due run's job (putting the turn in the mailbox): it is idempotent, so retrying is always safe. */
export const RUN_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 1_000 },
} as const;
const RECONCILE_LOCK_MS = 60_000;

export interface ScheduleJobData {
  scheduleId: string;
}

export interface ScheduleWithNext extends Schedule {
  /** The next run (ms) of an active task, null otherwise. */
  nextRunAt: number | null;
}

export interface CreateScheduleInput {
  origin: ScheduleOrigin;
  prompt: string;
  cron?: string;
  at?: string;
  inMinutes?: number;
  timeZone?: string;
  session?: SessionMode;
}

export type CancelResult = 'cancelled' | 'not_found' | 'not_active';

export interface ScheduleServiceOptions {
  store: ScheduleStore;
  queue: Queue<ScheduleJobData>;
  /** HERALD_TIMEZONE: a task's zone when none is given. */
  defaultTimeZone: string;
  /** HERALD_SCHEDULE_SESSION: where due turns run when the task does not say. */
  defaultSession: SessionMode;
  /** HERALD_SCHEDULES_PER_USER: active tasks one user may have. */
  maxPerUser: number;
  now?: () => number;
}

export class ScheduleService {
  private readonly now: () => number;

  constructor(private readonly opts: ScheduleServiceOptions) {
    this.now = opts.now ?? Date.now;
  }

  get store(): ScheduleStore {
    return this.opts.store;
  }

  /** Validates, records and schedules a task; a ScheduleInputError says what to change. */
  async create(input: CreateScheduleInput): Promise<ScheduleWithNext> {
    const prompt = input.prompt.trim();
    if (prompt === '') throw new ScheduleInputError('the prompt (what to do when the task is due) must not be empty');
    if (prompt.length > MAX_PROMPT_CHARS) throw new ScheduleInputError(`the prompt is too long (${prompt.length} characters; at most ${MAX_PROMPT_CHARS})`);
    const timeZone = input.timeZone?.trim() || this.opts.defaultTimeZone;
    if (!isTimeZone(timeZone)) throw new ScheduleInputError(`unknown time zone "${timeZone}": use an IANA name such as Europe/Berlin`);
    const when = resolveWhen({ cron: input.cron, at: input.at, inMinutes: input.inMinutes }, timeZone, this.now());
    const { platform, ownerId } = input.origin;
    const active = await this.opts.store.countActive(platform, ownerId);
    if (active >= this.opts.maxPerUser) {
      throw new ScheduleInputError(`you have ${active} scheduled tasks, the most allowed; cancel one first (/schedules)`);
    }
    const schedule = await this.opts.store.create({ origin: input.origin, sessionMode: input.session ?? this.opts.defaultSession, when, timeZone, prompt });
    try {
      await this.schedule(schedule);
    } catch (err) {
      // Not scheduled, so not kept: the caller says it failed, and nothing runs later by surprise.
      await this.opts.store.cancel(schedule.id);
      throw err;
    }
    return this.withNext(schedule);
  }

  /** Cancels a task; `owner` limits it to that user's (another's task is "not found" to them). */
  async cancel(id: string, owner?: { platform: string; ownerId: string }): Promise<CancelResult> {
    const schedule = await this.opts.store.get(id.trim().toLowerCase());
    if (!schedule || (owner && (schedule.platform !== owner.platform || schedule.ownerId !== owner.ownerId))) return 'not_found';
    if (!(await this.opts.store.cancel(schedule.id))) return 'not_active';
    await this.opts.queue.removeJobScheduler(schedule.id);
    return 'cancelled';
  }

  async get(id: string): Promise<ScheduleWithNext | null> {
    const schedule = await this.opts.store.get(id);
    return schedule ? this.withNext(schedule) : null;
  }

  async list(filter: ScheduleFilter = {}): Promise<ScheduleWithNext[]> {
    return (await this.opts.store.list(filter)).map((s) => this.withNext(s));
  }

  /**
   * Puts back the job scheduler of every active task that has none in Redis (Redis lost its data), and removes
   * schedulers whose task is not active. One worker at a time (a lock in Redis); returns what it changed.
   */
  async reconcile(redis: Redis, prefix: string, log: Logger): Promise<{ restored: number; removed: number }> {
    const lock = `${prefix}:schedules:reconcile`;
    if ((await redis.set(lock, '1', 'PX', RECONCILE_LOCK_MS, 'NX')) !== 'OK') return { restored: 0, removed: 0 };
    try {
      const known = new Set((await this.opts.queue.getJobSchedulers(0, -1)).map((s) => s.key));
      const active = await this.opts.store.list({ status: 'active', limit: 1_000_000 });
      let restored = 0;
      for (const s of active.filter((a) => !known.has(a.id))) {
        await this.schedule(s);
        restored++;
        log.warn({ scheduleId: s.id }, 'scheduled task had no job scheduler in Redis; put it back');
      }
      const activeIds = new Set(active.map((a) => a.id));
      let removed = 0;
      for (const id of [...known].filter((k) => !activeIds.has(k))) {
        await this.opts.queue.removeJobScheduler(id);
        removed++;
      }
      return { restored, removed };
    } finally {
      await redis.del(lock);
    }
  }

  /** The job scheduler for a task; a one-off whose time passed while it was missing runs at once. */
  private async schedule(s: Schedule): Promise<void> {
    const repeat: Omit<RepeatOptions, 'key'> =
      s.when.kind === 'cron' ? { pattern: s.when.cron, tz: s.timeZone } : { every: ONCE_EVERY_MS, startDate: Math.max(s.when.runAt, this.now()), limit: 1 };
    await this.opts.queue.upsertJobScheduler(s.id, repeat, { name: 'run', data: { scheduleId: s.id }, opts: RUN_JOB_OPTIONS });
  }

  private withNext(s: Schedule): ScheduleWithNext {
    let nextRunAt: number | null = null;
    if (s.status === 'active') nextRunAt = s.when.kind === 'once' ? s.when.runAt : nextCronRuns(s.when.cron, s.timeZone, this.now())[0];
    return { ...s, nextRunAt };
  }
}
