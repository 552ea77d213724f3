import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore } from '@herald/agent-core';
import { PAIRING_CODE_ALPHABET, hashPairingCode } from './codes.js';
import {
  PAIRING_CODE_TTL_MS,
  PAIRING_LOCKOUT_MS,
  PAIRING_REQUEST_INTERVAL_MS,
  PairingService,
  parsePlatform,
  type PairingRequestResult,
} from './service.js';

const MIN = 60_000;
const open: PairingService[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const p of open.splice(0)) p.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function service(): { pairing: PairingService; clock: { t: number } } {
  const clock = { t: Date.UTC(2025, 0, 1) };
  const pairing = PairingService.open(':memory:', { now: () => clock.t });
  open.push(pairing);
  return { pairing, clock };
}

function codeOf(r: PairingRequestResult): string {
  if (r.status !== 'issued') throw new Error(`expected a code, got ${r.status}`);
  return r.code;
}

describe('PairingService', () => {
  it('issues an 8-character code from the unambiguous alphabet; approving it (any case) lets the user in', () => {
    const { pairing } = service();
    const code = codeOf(pairing.request('telegram', '42', 'ann'));
    expect(code).toMatch(new RegExp(`^[${PAIRING_CODE_ALPHABET}]{8}$`));
    expect(pairing.isApproved('telegram', '42')).toBe(false);
    expect(pairing.approve('telegram', `${code.slice(0, 4).toLowerCase()}-${code.slice(4)}`)).toEqual({
      status: 'approved',
      platform: 'telegram',
      userId: '42',
      userName: 'ann',
    });
    expect(pairing.isApproved('telegram', '42')).toBe(true);
    expect(pairing.isApproved('discord', '42')).toBe(false);
    expect(pairing.request('telegram', '42')).toEqual({ status: 'already_approved' });
    // A code works once.
    expect(pairing.approve('telegram', code).status).toBe('invalid');
  });

  it('a code expires after an hour', () => {
    const { pairing, clock } = service();
    const code = codeOf(pairing.request('slack', 'U1'));
    clock.t += PAIRING_CODE_TTL_MS;
    expect(pairing.approve('slack', code).status).toBe('invalid');
    expect(pairing.list('slack').pending).toEqual([]);
  });

  it('at most one code per user per 10 minutes; a later request replaces the old code', () => {
    const { pairing, clock } = service();
    const first = codeOf(pairing.request('telegram', '7'));
    clock.t += 5 * MIN;
    expect(pairing.request('telegram', '7')).toEqual({ status: 'rate_limited', retryAfterMs: 5 * MIN });
    clock.t += PAIRING_REQUEST_INTERVAL_MS;
    const second = codeOf(pairing.request('telegram', '7'));
    expect(pairing.approve('telegram', first).status).toBe('invalid');
    expect(pairing.approve('telegram', second).status).toBe('approved');
  });

  it('at most 3 pending codes per platform', () => {
    const { pairing } = service();
    for (const u of ['1', '2', '3']) codeOf(pairing.request('discord', u));
    expect(pairing.request('discord', '4')).toEqual({ status: 'too_many_pending' });
    expect(pairing.request('telegram', '4').status).toBe('issued');
    expect(pairing.list('discord').pending.map((p) => p.userId).sort()).toEqual(['1', '2', '3']);
  });

  it('5 failed approvals lock the platform for an hour, even for a right code', () => {
    const { pairing, clock } = service();
    const code = codeOf(pairing.request('telegram', '9'));
    for (let i = 4; i >= 1; i--) expect(pairing.approve('telegram', 'WRONGONE')).toEqual({ status: 'invalid', attemptsLeft: i });
    expect(pairing.approve('telegram', 'WRONGONE')).toEqual({ status: 'invalid', attemptsLeft: 0 });
    expect(pairing.approve('telegram', code)).toEqual({ status: 'locked', retryAfterMs: PAIRING_LOCKOUT_MS });
    expect(pairing.request('telegram', '10').status).toBe('locked');
    expect(pairing.approve('slack', 'WRONGONE')).toEqual({ status: 'invalid', attemptsLeft: 4 });
    clock.t += PAIRING_LOCKOUT_MS; // the old code expired meanwhile too
    expect(pairing.approve('telegram', codeOf(pairing.request('telegram', '9'))).status).toBe('approved');
  });

  it('revoke takes access away; list shows who is pending and approved', () => {
    const { pairing } = service();
    pairing.approve('telegram', codeOf(pairing.request('telegram', '1', 'one')));
    codeOf(pairing.request('telegram', '2', 'two'));
    const listed = pairing.list();
    expect(listed.approved.map((a) => [a.platform, a.userId, a.userName])).toEqual([['telegram', '1', 'one']]);
    expect(listed.pending.map((p) => p.userId)).toEqual(['2']);
    expect(pairing.revoke('telegram', '1')).toBe(true);
    expect(pairing.revoke('telegram', '1')).toBe(false);
    expect(pairing.isApproved('telegram', '1')).toBe(false);
  });

  it('stores only hashes, in the same SQLite file the session store migrates, visible to every process', () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-pairing-'));
    dirs.push(dir);
    const file = join(dir, 'herald.db');
    const store = SessionStore.open(file); // applies the registered pairing migration
    store.close();
    const a = PairingService.open(file);
    const b = PairingService.open(file);
    open.push(a, b);
    const code = codeOf(a.request('telegram', '5'));
    const raw = (a as unknown as { db: { prepare(sql: string): { all(): unknown[] } } }).db.prepare('SELECT * FROM pairing_requests').all();
    expect(JSON.stringify(raw)).not.toContain(code);
    expect(JSON.stringify(raw)).toContain(hashPairingCode(code));
    expect(b.approve('telegram', code).status).toBe('approved');
    expect(a.isApproved('telegram', '5')).toBe(true);
  });

  it('parsePlatform accepts known names only', () => {
    expect(parsePlatform(' Telegram ')).toBe('telegram');
    expect(() => parsePlatform('irc')).toThrow(/unknown platform "irc"/);
  });
});
