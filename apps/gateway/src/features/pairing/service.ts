/**
 * Pairing: how someone not on an allowlist gets in (Hermes' rules). An unknown user who DMs the bot gets a
 * one-time code; the owner approves it (`herald pairing approve <platform> <code>` or the admin API), and from
 * then on the user passes the AccessPolicy like an allowlisted one.
 *
 *   - codes: 8 characters, valid for 1 hour, stored only as a sha256 hash, approved case-insensitively;
 *   - at most one code per user per 10 minutes, and at most 3 pending codes per platform;
 *   - 5 failed approvals lock the platform's pairing (requests and approvals) for 1 hour.
 *
 * State lives in the session store's database (SQLite or PostgreSQL) next to the sessions, so every gateway process (and the CLI) sees the same approvals.
 */
import type { Platform } from '@herald/adapters';
import { generatePairingCode, hashPairingCode } from './codes.js';
import type { Sql } from '@herald/agent-core';
// Registers the pairing tables' migration: a store opened after this import has them.
import './schema.js';

export const PAIRING_CODE_TTL_MS = 60 * 60 * 1000;
export const PAIRING_REQUEST_INTERVAL_MS = 10 * 60 * 1000;
const PAIRING_MAX_PENDING_PER_PLATFORM = 3;
const PAIRING_MAX_FAILED_APPROVALS = 5;
export const PAIRING_LOCKOUT_MS = 60 * 60 * 1000;

export const PLATFORMS: readonly Platform[] = ['telegram', 'discord', 'slack', 'whatsapp', 'matrix'];

export type PairingRequestResult =
  | { status: 'issued'; code: string; expiresAt: number }
  | { status: 'already_approved' }
  | { status: 'rate_limited'; retryAfterMs: number }
  | { status: 'too_many_pending' }
  | { status: 'locked'; retryAfterMs: number };

export type PairingApproveResult =
  | { status: 'approved'; platform: Platform; userId: string; userName: string | null }
  | { status: 'invalid'; attemptsLeft: number }
  | { status: 'locked'; retryAfterMs: number };

export interface PendingPairing {
  platform: Platform;
  userId: string;
  userName: string | null;
  createdAt: number;
  expiresAt: number;
}

export interface ApprovedUser {
  platform: Platform;
  userId: string;
  userName: string | null;
  approvedAt: number;
}

export interface PairingOptions {
  /** Injectable clock (ms) so tests can step past expiries and lockouts. */
  now?: () => number;
}

export class UnknownPlatformNameError extends Error {
  override name = 'UnknownPlatformNameError';
}

/** For the CLI and the admin API: a platform name as typed → Platform, or a clear error. */
export function parsePlatform(name: string): Platform {
  const p = name.trim().toLowerCase();
  if ((PLATFORMS as readonly string[]).includes(p)) return p as Platform;
  throw new UnknownPlatformNameError(`unknown platform "${name}" (expected ${PLATFORMS.join(', ')})`);
}

interface RequestRow {
  platform: Platform;
  user_id: string;
  user_name: string | null;
  created_at: number;
  expires_at: number;
}

interface ApprovedRow {
  platform: Platform;
  user_id: string;
  user_name: string | null;
  approved_at: number;
}

export class PairingService {
  private readonly now: () => number;

  /** On the session store's database (SQLite or PostgreSQL), whose migrations create the pairing tables. */
  constructor(
    private readonly sql: Sql,
    opts: PairingOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  async isApproved(platform: Platform, userId: string): Promise<boolean> {
    return (await this.sql.get('SELECT 1 AS found FROM pairing_approved WHERE platform = ? AND user_id = ?', [platform, userId])) !== undefined;
  }

  /** An unknown user asks to pair: a new code, or why not. */
  request(platform: Platform, userId: string, userName?: string): Promise<PairingRequestResult> {
    return this.locked(platform, async () => {
      const now = this.now();
      if (await this.isApproved(platform, userId)) return { status: 'already_approved' };
      const lockedFor = await this.lockedForMs(platform, now);
      if (lockedFor > 0) return { status: 'locked', retryAfterMs: lockedFor };
      // Expired and denied codes go once their request interval is over (until then they still space requests out).
      await this.sql.run('DELETE FROM pairing_requests WHERE expires_at <= ? AND created_at <= ?', [now, now - PAIRING_REQUEST_INTERVAL_MS]);

      const previous = await this.sql.get<{ created_at: number }>('SELECT created_at FROM pairing_requests WHERE platform = ? AND user_id = ?', [
        platform,
        userId,
      ]);
      if (previous && now - previous.created_at < PAIRING_REQUEST_INTERVAL_MS) {
        return { status: 'rate_limited', retryAfterMs: previous.created_at + PAIRING_REQUEST_INTERVAL_MS - now };
      }
      // The user's own older code is replaced, so it does not count against the platform's limit.
      const others = (await this.sql.get<{ n: number }>('SELECT count(*) AS n FROM pairing_requests WHERE platform = ? AND user_id != ? AND expires_at > ?', [
        platform,
        userId,
        now,
      ])) as { n: number };
      if (others.n >= PAIRING_MAX_PENDING_PER_PLATFORM) return { status: 'too_many_pending' };

      const code = generatePairingCode();
      const expiresAt = now + PAIRING_CODE_TTL_MS;
      await this.sql.run(
        `INSERT INTO pairing_requests (platform, user_id, user_name, code_hash, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (platform, user_id) DO UPDATE SET user_name = excluded.user_name, code_hash = excluded.code_hash,
           created_at = excluded.created_at, expires_at = excluded.expires_at`,
        [platform, userId, userName ?? null, hashPairingCode(code), now, expiresAt],
      );
      return { status: 'issued', code, expiresAt };
    });
  }

  /** The owner approves a code (any case, dashes and spaces ignored). */
  approve(platform: Platform, code: string): Promise<PairingApproveResult> {
    return this.locked(platform, async () => {
      const now = this.now();
      const lockedFor = await this.lockedForMs(platform, now);
      if (lockedFor > 0) return { status: 'locked', retryAfterMs: lockedFor };
      const row = await this.sql.get<RequestRow>('SELECT * FROM pairing_requests WHERE platform = ? AND code_hash = ? AND expires_at > ?', [
        platform,
        hashPairingCode(code),
        now,
      ]);
      if (!row) return this.recordFailure(platform, now);

      await this.sql.run('DELETE FROM pairing_requests WHERE platform = ? AND user_id = ?', [platform, row.user_id]);
      await this.sql.run(
        `INSERT INTO pairing_approved (platform, user_id, user_name, approved_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (platform, user_id) DO UPDATE SET user_name = excluded.user_name, approved_at = excluded.approved_at`,
        [platform, row.user_id, row.user_name, now],
      );
      await this.sql.run('UPDATE pairing_lockouts SET failed_attempts = 0 WHERE platform = ?', [platform]);
      return { status: 'approved', platform, userId: row.user_id, userName: row.user_name };
    });
  }

  /**
   * The owner turns a pending request down: its code stops working at once. The user can ask for a new code once
   * the usual interval since their request has passed. True if a pending request was there.
   */
  deny(platform: Platform, userId: string): Promise<boolean> {
    return this.locked(platform, async () => {
      const now = this.now();
      const res = await this.sql.run('UPDATE pairing_requests SET expires_at = ?, code_hash = ? WHERE platform = ? AND user_id = ? AND expires_at > ?', [
        now,
        'denied',
        platform,
        userId,
        now,
      ]);
      return res.changes > 0;
    });
  }

  /** Takes a paired user's access away (allowlists are config and unaffected). True if they were approved. */
  revoke(platform: Platform, userId: string): Promise<boolean> {
    return this.locked(platform, async () => {
      await this.sql.run('DELETE FROM pairing_requests WHERE platform = ? AND user_id = ?', [platform, userId]);
      return (await this.sql.run('DELETE FROM pairing_approved WHERE platform = ? AND user_id = ?', [platform, userId])).changes > 0;
    });
  }

  /** Pending (unexpired) requests and approved users, newest first; one platform or all. */
  async list(platform?: Platform): Promise<{ pending: PendingPairing[]; approved: ApprovedUser[] }> {
    const only = platform === undefined ? [] : [platform];
    const where = platform === undefined ? '' : 'AND platform = ?';
    const pending = await this.sql.all<RequestRow>(`SELECT * FROM pairing_requests WHERE expires_at > ? ${where} ORDER BY created_at DESC`, [
      this.now(),
      ...only,
    ]);
    const approved = await this.sql.all<ApprovedRow>(`SELECT * FROM pairing_approved WHERE 1 = 1 ${where} ORDER BY approved_at DESC`, only);
    return {
      pending: pending.map((r) => ({ platform: r.platform, userId: r.user_id, userName: r.user_name, createdAt: r.created_at, expiresAt: r.expires_at })),
      approved: approved.map((r) => ({ platform: r.platform, userId: r.user_id, userName: r.user_name, approvedAt: r.approved_at })),
    };
  }

  /** Remaining lockout of the platform, 0 when pairing is open. */
  async lockedForMs(platform: Platform, now = this.now()): Promise<number> {
    const row = await this.sql.get<{ locked_until: number | null }>('SELECT locked_until FROM pairing_lockouts WHERE platform = ?', [platform]);
    return row?.locked_until != null && row.locked_until > now ? row.locked_until - now : 0;
  }

  /** One transaction per platform at a time: the limits above are read-then-write rules. */
  private locked<T>(platform: Platform, fn: () => Promise<T>): Promise<T> {
    return this.sql.transaction(async () => {
      await this.sql.lock(`pairing:${platform}`);
      return fn();
    });
  }

  private async recordFailure(platform: Platform, now: number): Promise<PairingApproveResult> {
    const row = (await this.sql.get<{ failed_attempts: number }>(
      `INSERT INTO pairing_lockouts (platform, failed_attempts) VALUES (?, 1)
       ON CONFLICT (platform) DO UPDATE SET failed_attempts = pairing_lockouts.failed_attempts + 1
       RETURNING failed_attempts`,
      [platform],
    )) as { failed_attempts: number };
    if (row.failed_attempts >= PAIRING_MAX_FAILED_APPROVALS) {
      await this.sql.run('UPDATE pairing_lockouts SET failed_attempts = 0, locked_until = ? WHERE platform = ?', [now + PAIRING_LOCKOUT_MS, platform]);
      return { status: 'invalid', attemptsLeft: 0 };
    }
    return { status: 'invalid', attemptsLeft: PAIRING_MAX_FAILED_APPROVALS - row.failed_attempts };
  }
}
