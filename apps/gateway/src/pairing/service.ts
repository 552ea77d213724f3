/**
 * Pairing: how someone not on an allowlist gets in (Hermes' rules). An unknown user who DMs the bot gets a
 * one-time code; the owner approves it (`herald pairing approve <platform> <code>` or the admin API), and from
 * then on the user passes the AccessPolicy like an allowlisted one.
 *
 *   - codes: 8 characters, valid for 1 hour, stored only as a sha256 hash, approved case-insensitively;
 *   - at most one code per user per 10 minutes, and at most 3 pending codes per platform;
 *   - 5 failed approvals lock the platform's pairing (requests and approvals) for 1 hour.
 *
 * State lives in SQLite next to the sessions, so every gateway process (and the CLI) sees the same approvals.
 */
import type { Platform } from '@herald/adapters';
import { generatePairingCode, hashPairingCode } from './codes.js';
import { PAIRING_SCHEMA } from './schema.js';
import { openSideDb, writeTx, type SideDb } from '../sessions/side-db.js';

export const PAIRING_CODE_TTL_MS = 60 * 60 * 1000;
export const PAIRING_REQUEST_INTERVAL_MS = 10 * 60 * 1000;
export const PAIRING_MAX_PENDING_PER_PLATFORM = 3;
export const PAIRING_MAX_FAILED_APPROVALS = 5;
export const PAIRING_LOCKOUT_MS = 60 * 60 * 1000;

export const PLATFORMS: readonly Platform[] = ['telegram', 'discord', 'slack'];

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

  private constructor(
    private readonly db: SideDb,
    opts: PairingOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Opens the pairing tables in Herald's SQLite file (HERALD_DB); ':memory:' for tests. */
  static open(dbPath: string, opts: PairingOptions = {}): PairingService {
    return new PairingService(openSideDb(dbPath, PAIRING_SCHEMA), opts);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  isApproved(platform: Platform, userId: string): boolean {
    return this.db.prepare('SELECT 1 FROM pairing_approved WHERE platform = ? AND user_id = ?').get(platform, userId) !== undefined;
  }

  /** An unknown user asks to pair: a new code, or why not. */
  request(platform: Platform, userId: string, userName?: string): PairingRequestResult {
    return writeTx(this.db, () => {
      const now = this.now();
      if (this.isApproved(platform, userId)) return { status: 'already_approved' };
      const lockedFor = this.lockedForMs(platform, now);
      if (lockedFor > 0) return { status: 'locked', retryAfterMs: lockedFor };
      this.db.prepare('DELETE FROM pairing_requests WHERE expires_at <= ?').run(now);

      const previous = this.db
        .prepare('SELECT created_at FROM pairing_requests WHERE platform = ? AND user_id = ?')
        .get(platform, userId) as { created_at: number } | undefined;
      if (previous && now - previous.created_at < PAIRING_REQUEST_INTERVAL_MS) {
        return { status: 'rate_limited', retryAfterMs: previous.created_at + PAIRING_REQUEST_INTERVAL_MS - now };
      }
      // The user's own older code is replaced, so it does not count against the platform's limit.
      const others = this.db
        .prepare('SELECT count(*) AS n FROM pairing_requests WHERE platform = ? AND user_id != ?')
        .get(platform, userId) as { n: number };
      if (others.n >= PAIRING_MAX_PENDING_PER_PLATFORM) return { status: 'too_many_pending' };

      const code = generatePairingCode();
      const expiresAt = now + PAIRING_CODE_TTL_MS;
      this.db
        .prepare(
          `INSERT INTO pairing_requests (platform, user_id, user_name, code_hash, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (platform, user_id) DO UPDATE SET user_name = excluded.user_name, code_hash = excluded.code_hash,
             created_at = excluded.created_at, expires_at = excluded.expires_at`,
        )
        .run(platform, userId, userName ?? null, hashPairingCode(code), now, expiresAt);
      return { status: 'issued', code, expiresAt };
    });
  }

  /** The owner approves a code (any case, dashes and spaces ignored). */
  approve(platform: Platform, code: string): PairingApproveResult {
    return writeTx(this.db, () => {
      const now = this.now();
      const lockedFor = this.lockedForMs(platform, now);
      if (lockedFor > 0) return { status: 'locked', retryAfterMs: lockedFor };
      const row = this.db
        .prepare('SELECT * FROM pairing_requests WHERE platform = ? AND code_hash = ? AND expires_at > ?')
        .get(platform, hashPairingCode(code), now) as RequestRow | undefined;
      if (!row) return this.recordFailure(platform, now);

      this.db.prepare('DELETE FROM pairing_requests WHERE platform = ? AND user_id = ?').run(platform, row.user_id);
      this.db
        .prepare(
          `INSERT INTO pairing_approved (platform, user_id, user_name, approved_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (platform, user_id) DO UPDATE SET user_name = excluded.user_name, approved_at = excluded.approved_at`,
        )
        .run(platform, row.user_id, row.user_name, now);
      this.db.prepare('UPDATE pairing_lockouts SET failed_attempts = 0 WHERE platform = ?').run(platform);
      return { status: 'approved', platform, userId: row.user_id, userName: row.user_name };
    });
  }

  /** Takes a paired user's access away (allowlists are config and unaffected). True if they were approved. */
  revoke(platform: Platform, userId: string): boolean {
    return writeTx(this.db, () => {
      this.db.prepare('DELETE FROM pairing_requests WHERE platform = ? AND user_id = ?').run(platform, userId);
      return this.db.prepare('DELETE FROM pairing_approved WHERE platform = ? AND user_id = ?').run(platform, userId).changes > 0;
    });
  }

  /** Pending (unexpired) requests and approved users, newest first; one platform or all. */
  list(platform?: Platform): { pending: PendingPairing[]; approved: ApprovedUser[] } {
    const only = platform === undefined ? [] : [platform];
    const where = platform === undefined ? '' : 'AND platform = ?';
    const pending = this.db
      .prepare(`SELECT * FROM pairing_requests WHERE expires_at > ? ${where} ORDER BY created_at DESC`)
      .all(this.now(), ...only) as RequestRow[];
    const approved = this.db
      .prepare(`SELECT * FROM pairing_approved WHERE 1 = 1 ${where} ORDER BY approved_at DESC`)
      .all(...only) as ApprovedRow[];
    return {
      pending: pending.map((r) => ({ platform: r.platform, userId: r.user_id, userName: r.user_name, createdAt: r.created_at, expiresAt: r.expires_at })),
      approved: approved.map((r) => ({ platform: r.platform, userId: r.user_id, userName: r.user_name, approvedAt: r.approved_at })),
    };
  }

  /** Remaining lockout of the platform, 0 when pairing is open. */
  lockedForMs(platform: Platform, now = this.now()): number {
    const row = this.db.prepare('SELECT locked_until FROM pairing_lockouts WHERE platform = ?').get(platform) as
      | { locked_until: number | null }
      | undefined;
    return row?.locked_until != null && row.locked_until > now ? row.locked_until - now : 0;
  }

  private recordFailure(platform: Platform, now: number): PairingApproveResult {
    const row = this.db
      .prepare(
        `INSERT INTO pairing_lockouts (platform, failed_attempts) VALUES (?, 1)
         ON CONFLICT (platform) DO UPDATE SET failed_attempts = failed_attempts + 1
         RETURNING failed_attempts`,
      )
      .get(platform) as { failed_attempts: number };
    if (row.failed_attempts >= PAIRING_MAX_FAILED_APPROVALS) {
      this.db
        .prepare('UPDATE pairing_lockouts SET failed_attempts = 0, locked_until = ? WHERE platform = ?')
        .run(now + PAIRING_LOCKOUT_MS, platform);
      return { status: 'invalid', attemptsLeft: 0 };
    }
    return { status: 'invalid', attemptsLeft: PAIRING_MAX_FAILED_APPROVALS - row.failed_attempts };
  }
}
