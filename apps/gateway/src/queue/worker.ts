/**
 * The worker side: a BullMQ Worker whose jobs are "session K has mail". Whoever wins K's lock drains K's mailbox
 * one turn at a time (see mailbox.ts for why this keeps order across any number of workers).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DelayedError, WaitingError, Worker, type Job } from 'bullmq';
import { isTransientStoreError } from '@herald/agent-core';
import type { Logger } from '../support/logger.js';
import { logConnectionErrors } from '../support/redis-errors.js';
import type { RedisTarget } from '../support/redis.js';
import { JOB_RETENTION, type BusyInputMode, type TurnJobData } from './producer.js';
import type { ControlBus } from './control.js';
import { LocalTurns } from './local-turns.js';
import type { Mailbox, MailboxEntry } from './mailbox.js';
import { TurnAbort } from './turn-abort.js';
import type { AbandonHandler, TurnEndHandler, TurnResult, TurnRunner } from './turn-context.js';
import { entriesJoiningHead, entryOf, type PendingEntry } from './running-turn.js';
import { turnContextOf, type Hold, type RanTurn, type RunningTurn } from './running-turn.js';
import { DEFAULT_WATCHDOG_MS, WATCHDOG_GRACE_MS, runWatched, type WatchdogLimits } from './running-turn.js';
import { DEFAULT_JOB_LOCK_MS, DEFAULT_STALLED_INTERVAL_MS, renewEveryMs } from './leases.js';
import { abandonMessage, drainOutcome, handBack, HANDOVER_GRACE_MS, type HeldJob } from './hand-back.js';

export const TURN_QUEUE = 'turns';

export type { AroundTurn, TurnContext, TurnResult, TurnOutcomeKind, TurnRunner, TurnEndHandler, AbandonHandler } from './turn-context.js';
export { TurnAbort } from './turn-abort.js';

export interface TurnWorkerOptions {
  connection: RedisTarget;
  prefix: string;
  mailbox: Mailbox;
  control: ControlBus;
  runTurn: TurnRunner;
  /** Takes an abandoned turn's write and send access away and tells the user (roles/worker-parts.ts: store + egress). */
  onAbandon: AbandonHandler;
  /** Called after a turn's entries were acknowledged (see TurnEndHandler). */
  onTurnEnd?: TurnEndHandler;
  concurrency: number;
  /**
   * The busy-input mode of a session's messages: one for all, or their agent profile's (features/profiles/table.ts),
   * looked up by the entry's profile name (`fallback`: no name, or a profile this process does not know).
   */
  busyInputMode: BusyInputMode | { byProfile: ReadonlyMap<string, BusyInputMode>; fallback: BusyInputMode };
  log: Logger;
  /** BullMQ job lock; a killed worker's job is recovered after about this long (default leases.ts). */
  jobLockMs?: number;
  /** How often BullMQ looks for jobs whose lock ran out (default leases.ts). */
  stalledIntervalMs?: number;
  /** A turn with no agent activity for this long is aborted and its session unlocked (default 1,800 s). */
  watchdogMs?: number;
  /** How long an aborted turn may take to end before it is abandoned (default 5 s). */
  watchdogGraceMs?: number;
  /** True while Redis answers (the main client is connected): a shutdown does not wait on a Redis that is gone. */
  redisReady: () => boolean;
  /** How long the parts of a message (an album, a split text) are waited for after the last one arrived (queue/parts.ts; default 1 s). */
  partsQuietMs?: number;
}

/** A turn that outlasted its store-outage patience is woken up again after this long (the entry stays at the head). */
const STORE_REWAKE_MS = 5_000;
export class TurnWorker {
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private worker: Worker<TurnJobData> | null = null;
  /** The turns running here and the sessions held between two turns; control signals go to it. */
  private readonly local = new LocalTurns();
  /** Jobs this worker holds, by job id: what a shutdown hands back (or abandons, when Redis is gone). */
  private readonly inFlight = new Map<string, HeldJob>();
  private closing = false;

  private readonly watchdog: WatchdogLimits;
  /** How often a held session lock is renewed (worked out once, not per turn). */
  private readonly renewLockMs: number;

  constructor(private readonly opts: TurnWorkerOptions) {
    this.watchdog = { idleMs: opts.watchdogMs ?? DEFAULT_WATCHDOG_MS, graceMs: opts.watchdogGraceMs ?? WATCHDOG_GRACE_MS };
    this.renewLockMs = renewEveryMs(opts.mailbox.lockTtlMs);
  }

  private get jobLockMs(): number {
    return this.opts.jobLockMs ?? DEFAULT_JOB_LOCK_MS;
  }

  get activeTurns(): number {
    return this.local.turns.size;
  }

  /** Why this worker cannot take jobs right now, or null when it can (for /health/ready). */
  notRunningReason(): string | null {
    if (this.closing) return 'queue worker is shutting down';
    if (!this.worker) return 'queue worker not started';
    if (!this.worker.isRunning()) return 'queue worker not running';
    return null;
  }

  async start(): Promise<void> {
    await this.opts.control.listen((s) => this.local.onSignal(s));
    this.worker = new Worker<TurnJobData>(TURN_QUEUE, (job, token) => this.process(job, token), {
      connection: { ...this.opts.connection, maxRetriesPerRequest: null },
      prefix: this.opts.prefix,
      concurrency: this.opts.concurrency,
      lockDuration: this.jobLockMs,
      stalledInterval: this.opts.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
      // A job is only a wake-up call; recovering it many times is harmless, losing it is not.
      maxStalledCount: 1_000,
      ...JOB_RETENTION,
    });
    logConnectionErrors(this.opts.log, 'worker', this.worker, this.worker.getBackend());
    this.worker.on('failed', (job, err) => this.opts.log.error({ err, jobId: job?.id }, 'turn job failed'));
    await this.worker.waitUntilReady();
  }

  /**
   * Stops taking jobs, lets running turns finish for up to `drainMs`, then aborts the rest; their mailbox entries
   * stay at the head, so whoever takes the session next runs them again.
   *
   * Handing a job back needs Redis. When Redis is unreachable, nothing more is waited for once no turn is running
   * (a turn still running may yet deliver its reply, so it gets the drain), or at the drain's end; with Redis there,
   * aborted turns get a short grace to hand back. What is still held then is abandoned with one log line: BullMQ
   * redelivers those jobs once their lock expires, and the outbox keeps a delivered reply from being sent twice.
   */
  async close(drainMs: number): Promise<void> {
    if (!this.worker) return;
    const w = this.worker;
    this.worker = null;
    this.closing = true;
    const { outcome, cutShort } = await drainOutcome({
      closing: w.close(),
      drainMs,
      redisReady: () => this.opts.redisReady(),
      running: () => this.local.turns.size,
      cutShort: () => this.local.cutShort(drainMs, this.opts.log),
    });
    try {
      if (outcome !== 'closed') await this.abandon(w, outcome, cutShort);
    } finally {
      await this.opts.control.close();
    }
  }

  /**
   * Stops waiting for BullMQ. With Redis there, the turns that would not end are handed back at once (session lock
   * released, job put back to wait): another worker runs them now, and the fence keeps the stragglers from writing
   * or sending. Without Redis, what this worker still held is logged; BullMQ redelivers it when its lock expires.
   */
  private async abandon(w: Worker<TurnJobData>, why: 'redis' | 'timeout', cutShort: number): Promise<void> {
    const held = [...this.inFlight.values()];
    const handed = why === 'timeout' ? await handBack(held, this.opts.mailbox, HANDOVER_GRACE_MS) : 0;
    const abandoned = held.map(({ jobId, sessionKey }) => ({ jobId, sessionKey }));
    this.opts.log.warn(
      { abandoned, handedBack: handed, turnsCutShort: cutShort, reason: why },
      abandonMessage({ why, held, handed, cutShort, jobLockMs: this.jobLockMs }),
    );
    // Not awaited: a client that is reconnecting may never report its end, and the process is about to exit.
    void w.disconnect().catch(() => undefined);
  }

  private async process(job: Job<TurnJobData>, token?: string): Promise<string> {
    const jobId = job.id ?? '?';
    this.inFlight.set(jobId, { jobId, sessionKey: job.data.sessionKey, job, jobToken: token, lockToken: null });
    try {
      return await this.processHeld(job, token);
    } finally {
      this.inFlight.delete(jobId);
    }
  }

  private async processHeld(job: Job<TurnJobData>, token?: string): Promise<string> {
    const { sessionKey } = job.data;
    const { mailbox } = this.opts;
    // One round trip: nothing to do, someone else's turn, or the lock and the first entry to run.
    const got = await mailbox.take(sessionKey, this.id, entryOf(job.data));
    if (got.status === 'empty') return 'drained by the lock holder';
    if (got.status === 'held') {
      if (!got.holds) return 'drained by the lock holder';
      // The holder will most likely drain our entry; if it died, its lock expires and we take over then.
      const wait = Math.min(Math.max(got.heldForMs, 200), mailbox.lockTtlMs) + Math.floor(Math.random() * 100);
      await job.moveToDelayed(Date.now() + wait, token);
      throw new DelayedError();
    }

    const held = this.inFlight.get(job.id ?? '?');
    if (held) held.lockToken = got.token;
    const log = this.opts.log.child({ sessionKey, jobId: job.id });
    const hold: Hold = { sessionKey, lockToken: got.token, fence: got.fence, lost: false, current: null };
    const heartbeat = this.keepLock(hold, log);
    let turns = 0;
    let released = false;
    // The entry to run next, when the last step told (take, then each ack); else it is read.
    let next: { raw: string; entry: MailboxEntry } | null = got.head;
    try {
      while (!hold.lost) {
        // Shutting down: finish the turn in hand, leave the rest of the mailbox to another worker.
        if (this.closing) await this.handOver(job, sessionKey, got.token, token);
        if (this.local.between.get(sessionKey)?.stopped) next = null;
        this.local.between.delete(sessionKey);
        const head = next ?? (await mailbox.head(sessionKey));
        next = null;
        if (!head) {
          const r = await mailbox.releaseIfEmpty(sessionKey, got.token);
          if (r !== 0) {
            released = true;
            break;
          }
          continue;
        }
        // What the turn answers besides the head: merged messages (interrupt mode), the other parts of its message.
        const merged = await entriesJoiningHead({
          mailbox,
          sessionKey,
          head: head.entry,
          mode: this.busyModeOf(head.entry),
          partsQuietMs: this.opts.partsQuietMs,
          stop: () => hold.lost || this.closing,
        });
        if (hold.lost) break;
        if (this.closing) continue; // handed over at the top of the loop
        // A /stop while parts were being waited for took the entries (and the session) away: nothing to answer.
        if (head.entry.payload.partOf !== undefined && !(await mailbox.holds(sessionKey, head.entry.id, head.entry.seq))) {
          hold.lost = !(await mailbox.renew(sessionKey, got.token));
          continue;
        }
        const ran = await this.runOne(job, token, hold, head, merged, log);
        turns++;
        const { left, next: following } = await this.acknowledge(hold, head.raw, ran, log);
        next = following;
        if (left === -1) {
          hold.lost = true;
          break;
        }
        if (left === 0) {
          released = true;
          break;
        }
      }
    } finally {
      this.local.between.delete(sessionKey);
      clearInterval(heartbeat);
      // Lost, handed over, or failing (BullMQ retries the job): free the session now rather than at lock expiry.
      // The token check in the script makes this a no-op when the lock is no longer ours.
      if (!released) await mailbox.release(sessionKey, got.token).catch(() => undefined);
    }
    return `${turns} turn(s)`;
  }

  /**
   * The turn's entries leave the mailbox in one round trip (their redelivery memory shortens, and the lock goes if
   * nothing is left, else the next entry comes back with it); then the turn's after-ack steps run.
   */
  private async acknowledge(hold: Hold, headRaw: string, ran: RanTurn, log: Logger): Promise<{ left: number; next: PendingEntry | null }> {
    const acked = await this.opts.mailbox.ackAndNext(hold.sessionKey, hold.lockToken, headRaw, ran.turn.absorbed);
    if (acked.next) this.local.between.set(hold.sessionKey, { stopped: false });
    // Only now the reaction swap and the like: a quick follow-up finds the session free, not "queued".
    if (ran.result?.afterAck) await ran.result.afterAck().catch((err: unknown) => log.warn({ err }, 'after-turn step failed'));
    if (acked.left !== -1 && this.opts.onTurnEnd) await this.opts.onTurnEnd(ran.entries).catch((err: unknown) => log.warn({ err }, 'turn-end step failed'));
    return acked;
  }

  /** Renews the session's lock while the job holds it; a failed renewal aborts the turn in hand (`hold.current`). */
  private keepLock(hold: Hold, log: Logger): NodeJS.Timeout {
    const { mailbox } = this.opts;
    return setInterval(() => {
      mailbox.renew(hold.sessionKey, hold.lockToken).then(
        (ok) => {
          if (!ok && !hold.lost) {
            hold.lost = true;
            log.warn('session lock lost (stopped or expired); abandoning the turn');
            hold.current?.controller.abort(new TurnAbort('lock_lost'));
          }
        },
        (err: unknown) => log.warn({ err }, 'lock renewal failed'),
      );
    }, this.renewLockMs);
  }

  /** Runs the turn of `head` (and what joined it) inside the watchdog; a shutdown abort hands the job over. */
  private async runOne(
    job: Job<TurnJobData>,
    token: string | undefined,
    hold: Hold,
    head: { raw: string; entry: MailboxEntry },
    merged: PendingEntry[],
    log: Logger,
  ): Promise<RanTurn> {
    const { sessionKey } = hold;
    const entries = [head.entry, ...merged.map((m) => m.entry)];
    const last = entries[entries.length - 1];
    // The turn's logger is a child of the worker's, not of this job's: a child of a short-lived logger makes it a
    // prototype (pino's children are Object.create(parent)), which costs a map in the old generation pointing at
    // it, and the job's objects then outlive the next young collection.
    const turnLog = this.opts.log.child({ sessionKey, jobId: job.id, turnId: last.id });
    const scheduled = head.entry.payload.scheduled !== undefined;
    const turn: RunningTurn = {
      sessionKey,
      // A scheduled run is never made stale by a later message (only /stop, which takes the lock, ends it).
      seq: scheduled ? Number.MAX_SAFE_INTEGER : last.seq,
      fence: hold.fence,
      scheduled,
      entryIds: new Set(entries.map((e) => e.id)),
      lastActivity: Date.now(),
      controller: new AbortController(),
      steer: [],
      absorbed: merged.map((m) => m.raw),
    };
    this.local.turns.add(turn);
    hold.current = turn;
    let result: TurnResult | void = undefined;
    try {
      // Registered as running first, then checked: a withdrawal either shows here or finds the turn running.
      if (await this.withdrawn(entries)) {
        turn.controller.abort(new TurnAbort('stop'));
        log.info({ turnId: last.id }, 'message withdrawn by its sender before its turn ran; skipped');
      } else {
        const run = this.opts.runTurn(turnContextOf(this.opts.mailbox, hold, turn, entries, head.entry.seq, turnLog));
        result = await runWatched(turn, this.watchdog, log, run, async () => this.opts.onAbandon({ sessionKey, turnId: last.id, entries, log: turnLog }));
      }
    } catch (err) {
      // The database stayed down past the turn's own patience (turn/pipeline.ts rideOutStoreOutage): keep the entry and put the
      // wake-up off, without spending one of BullMQ's attempts (those are for the job: docs/architecture.md).
      if (isTransientStoreError(err)) {
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'store unavailable; the turn will run again');
        await job.moveToDelayed(Date.now() + STORE_REWAKE_MS + Math.floor(Math.random() * 1_000), token);
        throw new DelayedError();
      }
      // The runner reports its own failures to the user; anything else reaching here is a bug.
      if (!(err instanceof TurnAbort)) log.error({ err }, 'turn runner threw; dropping the entry so the session is not stuck');
    } finally {
      hold.current = null;
      this.local.turns.delete(turn);
    }
    const reason: unknown = turn.controller.signal.reason;
    log.debug(
      { turnId: last.id, outcome: result?.outcome?.kind, spend: result?.outcome?.spend, abort: reason instanceof TurnAbort ? reason.kind : undefined },
      'turn ended',
    );
    if (reason instanceof TurnAbort && reason.kind === 'shutdown') await this.handOver(job, sessionKey, hold.lockToken, token);
    return { entries, turn, result };
  }

  private busyModeOf(entry: MailboxEntry): BusyInputMode {
    const mode = this.opts.busyInputMode;
    if (typeof mode === 'string') return mode;
    const profile = entry.payload.profile;
    return (profile === undefined ? undefined : mode.byProfile.get(profile)) ?? mode.fallback;
  }

  private async withdrawn(entries: MailboxEntry[]): Promise<boolean> {
    const ids = entries.filter((e) => e.payload.withdrawable).map((e) => e.id);
    // Redis trouble here must not cost the message: run the turn (a withdrawal still aborts it while it runs).
    return ids.length > 0 && this.opts.mailbox.anyWithdrawn(ids).catch(() => false);
  }

  /** Leaves the mailbox as it is, frees the session and puts the job back so another worker picks it up now. */
  private async handOver(job: Job<TurnJobData>, sessionKey: string, lockToken: string, jobToken?: string): Promise<never> {
    await this.opts.mailbox.release(sessionKey, lockToken);
    await job.moveToWait(jobToken);
    throw new WaitingError();
  }
}
