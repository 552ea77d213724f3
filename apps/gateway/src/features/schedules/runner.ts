/**
 * The worker side of scheduled tasks: a BullMQ worker on the `schedules` queue, whose jobs are the due runs the
 * job schedulers make (one job per run, taken by one worker however many are up). A due run becomes an entry in
 * the chat session's mailbox, so its turn queues behind a turn the user has running, and is answered and delivered
 * like a message — through the normal egress, with its retries and the outbox.
 *
 * Handling a run twice (a job recovered after a worker died) is harmless: the store counts the run once (and a
 * run counted but not yet queued is still queued), and the entry's id names the run, so the mailbox takes it once.
 */
import { Worker, type Job, type Queue } from 'bullmq';
import type { Logger } from '../../support/logger.js';
import { logConnectionErrors } from '../../support/redis-errors.js';
import type { RedisTarget } from '../../support/redis.js';
import type { EnqueueResult, TurnPayload } from '../../queue/mailbox.js';
import { RUN_JOB_OPTIONS, SCHEDULE_QUEUE, type ScheduleJobData } from './service.js';
import type { Schedule, ScheduleStore } from './store.js';
import { describeWhen } from './timing.js';

export interface ScheduleRunnerOptions {
  connection: RedisTarget;
  prefix: string;
  store: ScheduleStore;
  queue: Queue<ScheduleJobData>;
  /** TurnProducer.submitScheduled: the run into the chat's mailbox and a turn job for it. */
  submit: (sessionKey: string, payload: TurnPayload) => Promise<EnqueueResult>;
  /** The access policy: a task whose owner may no longer talk to the agent does not run. */
  ownerAllowed: (platform: string, userId: string) => Promise<boolean>;
  log: Logger;
  concurrency?: number;
}

/** What the agent reads when the task is due: what it is, whose, and that its answer goes to the chat. */
export function taskMessage(s: Schedule): string {
  const who = s.ownerName ?? s.ownerId;
  return `[Scheduled task ${s.id}, set by ${who} (${describeWhen(s.when, s.timeZone)}). It is due now: do what it says; your answer is sent to the chat.]\n${s.prompt}`;
}

/** The turn of one due run, as a mailbox entry's payload (plain JSON). */
export function scheduledPayload(s: Schedule, runAt: number): TurnPayload {
  return {
    text: taskMessage(s),
    platform: s.platform,
    conversationId: s.conversationId,
    chatType: s.chatType,
    chatId: s.chatId,
    threadId: s.threadId,
    userId: s.ownerId,
    userName: s.ownerName,
    messageId: `schedule.${s.id}.${runAt}`,
    // `id` first: /stop recognises a waiting run by it (see STOP in queue/mailbox.ts).
    scheduled: { id: s.id, session: s.sessionMode, runAt },
    ...(s.profile !== undefined && { profile: s.profile }),
    ...(s.account !== undefined && { account: s.account }),
  };
}

export class ScheduleRunner {
  private worker: Worker<ScheduleJobData> | null = null;

  constructor(private readonly opts: ScheduleRunnerOptions) {}

  async start(): Promise<void> {
    this.worker = new Worker<ScheduleJobData>(SCHEDULE_QUEUE, (job) => this.run(job), {
      connection: { ...this.opts.connection, maxRetriesPerRequest: null },
      prefix: this.opts.prefix,
      concurrency: this.opts.concurrency ?? 5,
      removeOnComplete: RUN_JOB_OPTIONS.removeOnComplete,
      removeOnFail: RUN_JOB_OPTIONS.removeOnFail,
    });
    logConnectionErrors(this.opts.log, 'schedules worker', this.worker, this.worker.getBackend());
    this.worker.on('failed', (job, err) => this.opts.log.error({ err, jobId: job?.id }, 'scheduled run failed to queue its turn'));
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    await w?.close();
  }

  /** One due run. Exported behaviour for tests: what the job does, given its data. */
  async run(job: Pick<Job<ScheduleJobData>, 'data' | 'id' | 'opts' | 'timestamp'>): Promise<string> {
    const { store, queue, log } = this.opts;
    const id = job.data.scheduleId;
    // The run's own time: the scheduler's slot (also in the job id, `repeat:<id>:<ms>`), not when a worker got to it.
    const fromId = Number(String(job.id).split(':').pop());
    const runAt = job.opts.prevMillis ?? (Number.isFinite(fromId) ? fromId : job.timestamp);
    const schedule = await store.get(id);
    // This run counted already: an earlier attempt stopped between counting and queuing it, so it goes on.
    const counted = schedule?.lastRunAt === runAt;
    if (!schedule || (schedule.status !== 'active' && !counted)) {
      // Cancelled (or done) after this run was made: nothing to do, and no more runs.
      await queue.removeJobScheduler(id);
      return 'not active';
    }
    // Counted first, so a task is never listed as still due once its turn has answered.
    if (!counted) await store.recordRun(id, runAt);
    // Unauthorised users never reach the agent, not even through a task they set while they could.
    if (!(await this.opts.ownerAllowed(schedule.platform, schedule.ownerId))) {
      log.warn({ scheduleId: id, platform: schedule.platform, ownerId: schedule.ownerId }, 'scheduled task skipped: its owner is no longer allowed');
      if (schedule.when.kind === 'once') await queue.removeJobScheduler(id);
      return 'owner not allowed';
    }
    const res = await this.opts.submit(schedule.sessionKey, scheduledPayload(schedule, runAt));
    if (schedule.when.kind === 'once') await queue.removeJobScheduler(id);
    log.info({ scheduleId: id, sessionKey: schedule.sessionKey, runAt, status: res.status }, 'scheduled task due: its turn is queued');
    return res.status;
  }
}
