/**
 * When a conversation starts afresh by itself (Hermes' session reset policy):
 *   idle   — after HERALD_SESSION_IDLE_MINUTES without activity (default 1,440 = a day);
 *   daily  — once a day at HERALD_SESSION_DAILY_HOUR local time (default 04:00);
 *   both   — whichever comes first (default);   none — never.
 * Checked with a turn's begin (turn/stages/open.ts, currentSince), and by the HTTP API before it queues a turn
 * (resetExpiredSession): the expired session is ended (end_reason idle / daily) and the
 * message starts a new one. The user is told only when the old session had something in it.
 */
import type { Mailbox } from '../../queue/mailbox.js';
import { withSessionHeld } from './session-hold.js';
import { localDate, setBounded, type Session, type SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';

type ResetMode = 'idle' | 'daily' | 'both' | 'none';
export type ResetReason = 'idle' | 'daily';

export interface ResetPolicy {
  mode: ResetMode;
  idleMinutes: number;
  /** 0-23, local time of `timeZone`. */
  dailyHour: number;
  /** IANA zone for "local"; the host's zone when absent. */
  timeZone?: string;
}

const MS_PER_MINUTE = 60_000;
/** Keys whose last seen activity a process keeps (≈ 100 bytes each); past it the oldest is forgotten and read again. */
const ACTIVITY_SEEN_KEYS = 50_000;
const MS_PER_HOUR = 3_600_000;

export const RESET_NOTICES: Record<ResetReason, string> = {
  idle: '🌅 It has been a while, so this is a fresh conversation. (Send /resume to list titled ones.)',
  daily: '🌅 A new day, a fresh conversation. (Send /resume to list titled ones.)',
};

export function resetPolicyFrom(config: Pick<HeraldConfig, 'sessionReset' | 'sessionIdleMinutes' | 'sessionDailyHour'> & { timezone?: string }): ResetPolicy {
  return { mode: config.sessionReset, idleMinutes: config.sessionIdleMinutes, dailyHour: config.sessionDailyHour, timeZone: config.timezone };
}

/** Why a session last active at `lastActivity` has expired by `now`, or null while it is current. */
export function expiryReason(policy: ResetPolicy, lastActivity: number, now: number): ResetReason | null {
  if (policy.mode === 'none') return null;
  if ((policy.mode === 'daily' || policy.mode === 'both') && crossedDailyBoundary(policy, lastActivity, now)) return 'daily';
  if ((policy.mode === 'idle' || policy.mode === 'both') && now - lastActivity >= policy.idleMinutes * MS_PER_MINUTE) return 'idle';
  return null;
}

/**
 * True when a `dailyHour:00` local time lies in (lastActivity, now]. Shifting both instants back by the hour
 * turns "the day that starts at 04:00" into a calendar day, so comparing local dates is enough.
 */
export function crossedDailyBoundary(policy: Pick<ResetPolicy, 'dailyHour' | 'timeZone'>, lastActivity: number, now: number): boolean {
  const shift = policy.dailyHour * MS_PER_HOUR;
  return localDate(lastActivity - shift, policy.timeZone) < localDate(now - shift, policy.timeZone);
}

/**
 * The earliest last activity still current at `now` under `policy` (a session last active before it has expired), or
 * null when nothing expires: what the turn's begin compares the session's last activity with (turn/stages/open.ts).
 * Exactly expiryReason's rule: idle allows up to `idleMinutes` minus a millisecond, daily goes back to the start of
 * the current reset day (found once a day: crossedDailyBoundary is monotone in the last activity).
 */
export function currentSince(policy: ResetPolicy, now: number): number | null {
  if (policy.mode === 'none') return null;
  let since = Number.NEGATIVE_INFINITY;
  if (policy.mode === 'idle' || policy.mode === 'both') since = now - policy.idleMinutes * MS_PER_MINUTE + 1;
  if (policy.mode === 'daily' || policy.mode === 'both') since = Math.max(since, resetDayStart(policy, now));
  return since;
}

/** The last reset day's start found, by policy and day: one a process at a time (the day moves on, rarely the policy). */
let lastDayStart: { key: string; start: number } | null = null;
/** Two days back is always before the current reset day's start, whatever the zone's offsets do. */
const TWO_DAYS_MS = 48 * MS_PER_HOUR;

/** The first instant of the reset day `now` is in: the earliest t with no daily boundary in (t, now]. */
function resetDayStart(policy: Pick<ResetPolicy, 'dailyHour' | 'timeZone'>, now: number): number {
  const key = `${policy.dailyHour}|${policy.timeZone ?? ''}|${localDate(now - policy.dailyHour * MS_PER_HOUR, policy.timeZone)}`;
  if (lastDayStart?.key === key) return lastDayStart.start;
  // Bisection: `crossed` holds at lo, not at hi.
  let lo = now - TWO_DAYS_MS;
  let hi = now;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (crossedDailyBoundary(policy, mid, now)) lo = mid;
    else hi = mid;
  }
  lastDayStart = { key, start: hi };
  return hi;
}

export interface ResetOutcome {
  ended: Session;
  reason: ResetReason;
  /** What to tell the user; null when the old session was empty (nothing to lose, nothing to say). */
  notice: string | null;
}

/**
 * When each key's session was last seen active, by this process's reads of the store: the HTTP API's check before
 * each request it queues (resetExpiredSession; a chat message's turn checks with its begin instead) needs no read
 * while that time is still current. Sound because a key's activity only moves forward
 * (a new message, a new session after /new or a reset), and a later activity expires no sooner under either rule
 * (idle: less time since; daily: a shorter span to cross a boundary), whichever process caused it. Kept per
 * process, bounded; a key not remembered is read as before. (An /undo that removes the newest messages moves the
 * stored time back; the time seen before it is kept, which counts the /undo itself as activity.)
 *
 * Requests that arrive together for a key not yet remembered each read: sharing one read let them all
 * reach the queue in the same instant, and their wake-up jobs then met the session's lock held and were put off
 * again and again (measured: 2.5 more Redis commands and about 20 % more CPU a message in the throughput run).
 */
export class ActivitySeen {
  private readonly seen = new Map<string, number>();

  constructor(private readonly maxKeys = ACTIVITY_SEEN_KEYS) {}

  /** True when the key's session, last seen active at a time still current under `policy`, cannot have expired. */
  current(policy: ResetPolicy, sessionKey: string, now: number): boolean {
    const at = this.seen.get(sessionKey);
    return at !== undefined && expiryReason(policy, at, now) === null;
  }

  note(sessionKey: string, lastActivity: number): void {
    setBounded(this.seen, sessionKey, lastActivity, this.maxKeys);
  }
}

/** The key's open session and why it expired, or null while it is still current (reads only). */
async function expiredSession(
  store: SessionStore,
  sessionKey: string,
  policy: ResetPolicy,
  now: number,
  seen?: ActivitySeen,
): Promise<{ current: Session; reason: ResetReason } | null> {
  if (policy.mode === 'none' || seen?.current(policy, sessionKey, now)) return null;
  // One read, for a key whose last activity this process has not seen still current.
  const found = await store.currentSessionActivity(sessionKey);
  if (!found || found.session.endedAt !== null) return null;
  const reason = expiryReason(policy, found.lastActivity, now);
  if (reason === null) seen?.note(sessionKey, found.lastActivity);
  return reason ? { current: found.session, reason } : null;
}

/**
 * Ends the key's session if the policy says it expired. The caller runs this for a message that is about to
 * start a turn, and only while no turn holds the session (a running turn is activity).
 */
export async function applyResetPolicy(
  store: SessionStore,
  sessionKey: string,
  policy: ResetPolicy,
  now = Date.now(),
  /** Runs on the expiring session before it is ended (the memory flush, so the next session starts with its notes). */
  beforeReset?: (expiring: Session) => Promise<void>,
): Promise<ResetOutcome | null> {
  const expired = await expiredSession(store, sessionKey, policy, now);
  if (!expired) return null;
  const { current, reason } = expired;
  if (beforeReset && current.messageCount > 0) await beforeReset(current);
  const ended = await store.endSession(current.id, reason);
  return { ended, reason, notice: current.messageCount > 0 ? RESET_NOTICES[reason] : null };
}

/**
 * The HTTP API's check for a request about to start a turn. Most find their session current, which two
 * reads tell; only an expired one is ended, while holding the session (a running turn is activity, and no turn
 * may start on a session being ended). Returns the notice to send first, if any.
 */
export async function resetExpiredSession(
  deps: { store: SessionStore; mailbox: Mailbox; conversation: { resetPolicy: ResetPolicy; activitySeen: ActivitySeen } },
  sessionKey: string,
  /**
   * Runs on the expiring session before it is ended, while the session is held (the memory flush, as for /new):
   * what the agent saves is in the notes the new session starts with.
   */
  beforeReset?: (expiring: Session) => Promise<void>,
): Promise<string | null> {
  const policy = deps.conversation.resetPolicy;
  if (!(await expiredSession(deps.store, sessionKey, policy, Date.now(), deps.conversation.activitySeen))) return null;
  const held = await withSessionHeld(deps.mailbox, sessionKey, 'reset-policy', () => applyResetPolicy(deps.store, sessionKey, policy, Date.now(), beforeReset));
  if (!held.held) return null;
  return held.value?.notice ?? null;
}
