/**
 * The turn queue and the scheduled tasks' queue: every role has both (ingress adds turns and schedules tasks,
 * workers add wake-up jobs and due runs).
 */
import { Queue } from 'bullmq';
import type { HeraldConfig } from '../support/config/load.js';
import { logConnectionErrors } from '../support/redis-errors.js';
import { redisTarget } from '../support/redis.js';
import { ControlBus } from '../queue/control.js';
import { JOB_RETENTION, TurnProducer, type TurnJobData } from '../queue/producer.js';
import { TURN_QUEUE } from '../queue/worker.js';
import { openSchedules, type Schedules } from '../features/schedules/index.js';
import { opened, type Part, type StartContext } from './compose.js';
import type { RedisPart, StorePart } from './base-parts.js';
import type { ServicesPart } from './services-part.js';

/** Ingress adds a job per message; workers add wake-up jobs for stranded mailboxes (queue/janitor.ts). */
export class QueuePart implements Part {
  readonly name = 'queue';
  readonly needsRedis = true;
  #queue: Queue<TurnJobData> | undefined;
  #control: ControlBus | undefined;
  #producer: TurnProducer | undefined;

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly redis: RedisPart,
    private readonly shared: ServicesPart,
  ) {}

  get queue(): Queue<TurnJobData> {
    return opened(this.#queue, 'queue');
  }

  get control(): ControlBus {
    return opened(this.#control, 'queue');
  }

  get producer(): TurnProducer {
    return opened(this.#producer, 'queue');
  }

  open(): void {
    const { config, ctx } = this;
    const connection = { ...redisTarget(config), maxRetriesPerRequest: null };
    const queue = (this.#queue = new Queue<TurnJobData>(TURN_QUEUE, { connection, prefix: config.redisPrefix, defaultJobOptions: JOB_RETENTION }));
    logConnectionErrors(ctx.log, 'queue', queue, queue.getBackend());
    // Ingress puts messages in mailboxes; workers put due scheduled tasks there (features/schedules/runner.ts).
    this.#control = new ControlBus(this.redis.client, null, config.redisPrefix);
    this.#producer = new TurnProducer(queue, this.shared.services.mailbox, this.#control, ctx.log);
  }

  async stop(): Promise<void> {
    await this.#queue?.close();
  }
}

/** Scheduled tasks: rows in the store, BullMQ job schedulers on a queue of their own. */
export class SchedulesPart implements Part {
  readonly name = 'schedules';
  readonly needsRedis = true;
  #schedules: Schedules | undefined;

  constructor(
    private readonly config: HeraldConfig,
    private readonly ctx: StartContext,
    private readonly store: StorePart,
  ) {}

  get schedules(): Schedules {
    return opened(this.#schedules, 'schedules');
  }

  open(): void {
    this.#schedules = openSchedules(this.config, this.store.store, this.ctx.log.child({ component: 'schedules' }));
  }

  async stop(): Promise<void> {
    await this.#schedules?.close();
  }
}
