/**
 * Long polling over getUpdates, written here rather than using telegraf's loop because that loop gives up on
 * the first 409 and retries network errors at a fixed 5 s. This loop owns the retries of getUpdates itself
 * (the wait depends on the failure: a schedule for 409 conflicts, Telegram's retry_after, network backoff).
 *
 * Durability: an update is confirmed (the next getUpdates offset passes it) only after the gateway has taken it.
 * While some are still being handed over (the gateway retrying one while Redis is away, or a split message
 * waiting for its next part) the poller keeps fetching with the offset held at the oldest of them, skipping what
 * it already has, so new updates still flow. The poller does not retry a hand-over itself: the gateway's
 * hand-over is the one retry owner for that boundary. An update the gateway gave up on is confirmed and dropped
 * (one that always fails must not hold the offset forever), except when it was given up because of shutdown:
 * that one stays unconfirmed, so the next start fetches it again.
 */
import type { Logger } from 'pino';
import { AuthError, type PlatformError, RateLimitedError } from '../errors.js';
import type { AdapterHealth, AdapterState } from '../types.js';
import { isConflict, toPlatformError } from './api-errors.js';
import type { TelegramApi } from './api.js';
import { TELEGRAM_ALLOWED_UPDATES, type ReconnectWaits, type Sleep } from './config.js';
import { hasUpdateId } from './wire.js';

/** Pause between fetches while our own hand-overs are pending (those fetches return at once). */
const PENDING_REPOLL_MS = 100;

export interface PollerOptions {
  api: TelegramApi;
  timeoutSec: number;
  waits: ReconnectWaits;
  sleep: Sleep;
  logger: Logger;
  health: HealthTracker;
  /** Runs before every fetch; does start-up calls (getMe, …) until they have succeeded once. */
  prepare: (signal: AbortSignal) => Promise<void>;
  /** Hands one update over; resolves when it has been taken or given up ('failed'). Must not reject. */
  dispatch: (update: unknown) => Promise<unknown>;
  onFatal: (err: PlatformError) => void;
}

/** Network backoff: doubling from the initial wait, capped low at first, then higher for an outage that lasts. */
export function networkWaitMs(waits: ReconnectWaits, failures: number): number {
  const cap = failures < waits.networkLongAfter ? waits.networkMaxMs : waits.networkLongMaxMs;
  return Math.min(waits.networkInitialMs * 2 ** Math.min(failures, 30), cap);
}

export class Poller {
  private readonly abort = new AbortController();
  private readonly inFlight = new Map<number, Promise<unknown>>();
  private nextOffset = 0;
  /** The oldest update given up on during shutdown: never confirmed, so a restart fetches it again. */
  private keepFrom: number | null = null;
  private loop: Promise<void> | null = null;

  constructor(private readonly opts: PollerOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops fetching (aborting a pending long poll). */
  async halt(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  /** After `halt`: waits for hand-overs in progress, then confirms them so a restart does not fetch them again. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight.values()]);
    const offset = this.keepFrom ?? this.nextOffset;
    if (offset === 0) return;
    try {
      await this.opts.api.call('getUpdates', { offset, limit: 1, timeout: 0 });
    } catch (err) {
      this.opts.logger.warn({ err: String(err) }, 'telegram: could not confirm the last updates; they may arrive again');
    }
  }

  private confirmOffset(): number {
    return this.inFlight.size > 0 ? Math.min(...this.inFlight.keys()) : this.nextOffset;
  }

  private async run(): Promise<void> {
    const { api, waits, sleep, logger, health } = this.opts;
    const signal = this.abort.signal;
    let conflicts = 0;
    let networkFailures = 0;
    while (!signal.aborted) {
      try {
        await this.opts.prepare(signal);
        if (this.inFlight.size > 0) await sleep(PENDING_REPOLL_MS, signal);
        if (signal.aborted) break;
        const updates = await api.call(
          'getUpdates',
          {
            offset: this.confirmOffset(),
            timeout: this.inFlight.size > 0 ? 0 : this.opts.timeoutSec,
            allowed_updates: [...TELEGRAM_ALLOWED_UPDATES],
          },
          signal,
        );
        conflicts = 0;
        networkFailures = 0;
        health.set('connected');
        for (const u of updates) this.accept(u);
      } catch (err) {
        if (signal.aborted) break;
        if (isConflict(err)) {
          conflicts++;
          if (conflicts > waits.conflictMs.length) {
            this.opts.onFatal(
              toPlatformError(err, `getUpdates (${conflicts} conflicts in a row: another process is polling with this bot token, or a webhook is set)`),
            );
            return;
          }
          const wait = waits.conflictMs[conflicts - 1];
          health.set('connecting', String(err));
          logger.warn({ attempt: conflicts, waitMs: wait }, 'telegram getUpdates conflict (409); retrying');
          await sleep(wait, signal);
          continue;
        }
        const mapped = toPlatformError(err, 'getUpdates');
        if (mapped instanceof AuthError) {
          this.opts.onFatal(mapped);
          return;
        }
        if (mapped instanceof RateLimitedError) {
          await sleep(mapped.retryAfterMs, signal);
          continue;
        }
        const wait = networkWaitMs(waits, networkFailures++);
        health.set('disconnected', mapped.message);
        logger.warn({ err: mapped.message, waitMs: wait, failures: networkFailures }, 'telegram polling failed; reconnecting');
        await sleep(wait, signal);
      }
    }
  }

  private accept(update: unknown): void {
    if (!hasUpdateId(update)) {
      this.opts.logger.warn('telegram update without update_id ignored');
      return;
    }
    const id = update.update_id;
    if (id < this.nextOffset) return; // fetched again while an older one is still being handed over
    this.nextOffset = id + 1;
    const done = this.handOver(update, id).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, done);
  }

  private async handOver(update: unknown, id: number): Promise<void> {
    const result = await this.opts.dispatch(update);
    if (result !== 'failed') return;
    if (this.abort.signal.aborted) {
      this.keepFrom = Math.min(this.keepFrom ?? id, id);
      this.opts.logger.warn({ updateId: id }, 'telegram update not handed over before shutdown; left unconfirmed for the next start');
      return;
    }
    this.opts.logger.error({ updateId: id }, 'telegram update could not be handed over; dropping it');
  }
}

/**
 * The ingress's health as the admin server reports it: the connection's state, set by the poll loop below (or, in
 * webhook mode, by the ingress), and when the last update came.
 */
export class HealthTracker {
  private state: AdapterState = 'disconnected';
  private error: string | null = null;
  private lastEventAt: number | null = null;

  set(state: AdapterState, error: string | null = null): void {
    // fatal is final until the ingress is started again
    if (this.state === 'fatal' && state !== 'connecting') return;
    this.state = state;
    this.error = error;
  }

  get current(): AdapterState {
    return this.state;
  }

  event(): void {
    this.lastEventAt = Date.now();
  }

  snapshot(): AdapterHealth {
    return { state: this.state, lastEventAt: this.lastEventAt, error: this.error };
  }
}
