import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { PAIRING_CODE_ALPHABET, hashPairingCode } from './codes.js';
import { PAIRING_CODE_TTL_MS, PAIRING_LOCKOUT_MS, PAIRING_REQUEST_INTERVAL_MS, PairingService, parsePlatform, type PairingRequestResult } from './service.js';

const MIN = 60_000;

describe.each(STORE_BACKENDS)('pairing on %s', (backend) => {
  const temp = useTempStores(backend);

  async function service(): Promise<{ pairing: PairingService; clock: { t: number } }> {
    const clock = { t: Date.UTC(2025, 0, 1) };
    const store = await temp.open();
    const pairing = new PairingService(store.sql, { now: () => clock.t });
    return { pairing, clock };
  }

  function codeOf(r: PairingRequestResult): string {
    if (r.status !== 'issued') throw new Error(`expected a code, got ${r.status}`);
    return r.code;
  }

  describe('PairingService', () => {
    it('issues an 8-character code from the unambiguous alphabet; approving it (any case) lets the user in', async () => {
      const { pairing } = await service();
      const code = codeOf(await pairing.request('telegram', '42', 'ann'));
      expect(code).toMatch(new RegExp(`^[${PAIRING_CODE_ALPHABET}]{8}$`));
      expect(await pairing.isApproved('telegram', '42')).toBe(false);
      expect(await pairing.approve('telegram', `${code.slice(0, 4).toLowerCase()}-${code.slice(4)}`)).toEqual({
        status: 'approved',
        platform: 'telegram',
        userId: '42',
        userName: 'ann',
      });
      expect(await pairing.isApproved('telegram', '42')).toBe(true);
      expect(await pairing.isApproved('discord', '42')).toBe(false);
      expect(await pairing.request('telegram', '42')).toEqual({ status: 'already_approved' });
      // A code works once.
      expect((await pairing.approve('telegram', code)).status).toBe('invalid');
    });

    it('a code expires after an hour', async () => {
      const { pairing, clock } = await service();
      const code = codeOf(await pairing.request('slack', 'U1'));
      clock.t += PAIRING_CODE_TTL_MS;
      expect((await pairing.approve('slack', code)).status).toBe('invalid');
      expect((await pairing.list('slack')).pending).toEqual([]);
    });

    it('at most one code per user per 10 minutes; a later request replaces the old code', async () => {
      const { pairing, clock } = await service();
      const first = codeOf(await pairing.request('telegram', '7'));
      clock.t += 5 * MIN;
      expect(await pairing.request('telegram', '7')).toEqual({ status: 'rate_limited', retryAfterMs: 5 * MIN });
      clock.t += PAIRING_REQUEST_INTERVAL_MS;
      const second = codeOf(await pairing.request('telegram', '7'));
      expect((await pairing.approve('telegram', first)).status).toBe('invalid');
      expect((await pairing.approve('telegram', second)).status).toBe('approved');
    });

    it('deny voids a pending code at once; the user may ask again after the usual interval; a denied code frees its slot', async () => {
      const { pairing, clock } = await service();
      const code = codeOf(await pairing.request('telegram', '9', 'mallory'));
      expect(await pairing.deny('telegram', '9')).toBe(true);
      expect(await pairing.deny('telegram', '9')).toBe(false);
      expect((await pairing.list('telegram')).pending).toEqual([]);
      expect((await pairing.approve('telegram', code)).status).toBe('invalid');
      // Asking again at once is spaced out as any repeat request is; after the interval a new code comes.
      expect((await pairing.request('telegram', '9')).status).toBe('rate_limited');
      for (const u of ['1', '2', '3']) codeOf(await pairing.request('telegram', u));
      clock.t += PAIRING_REQUEST_INTERVAL_MS;
      expect(await pairing.deny('telegram', '1')).toBe(true);
      codeOf(await pairing.request('telegram', '9'));
      expect(await pairing.isApproved('telegram', '9')).toBe(false);
    });

    it('at most 3 pending codes per platform', async () => {
      const { pairing } = await service();
      for (const u of ['1', '2', '3']) codeOf(await pairing.request('discord', u));
      expect(await pairing.request('discord', '4')).toEqual({ status: 'too_many_pending' });
      expect((await pairing.request('telegram', '4')).status).toBe('issued');
      expect((await pairing.list('discord')).pending.map((p) => p.userId).sort()).toEqual(['1', '2', '3']);
    });

    it('5 failed approvals lock the platform for an hour, even for a right code', async () => {
      const { pairing, clock } = await service();
      const code = codeOf(await pairing.request('telegram', '9'));
      for (let i = 4; i >= 1; i--) expect(await pairing.approve('telegram', 'WRONGONE')).toEqual({ status: 'invalid', attemptsLeft: i });
      expect(await pairing.approve('telegram', 'WRONGONE')).toEqual({ status: 'invalid', attemptsLeft: 0 });
      expect(await pairing.approve('telegram', code)).toEqual({ status: 'locked', retryAfterMs: PAIRING_LOCKOUT_MS });
      expect((await pairing.request('telegram', '10')).status).toBe('locked');
      expect(await pairing.approve('slack', 'WRONGONE')).toEqual({ status: 'invalid', attemptsLeft: 4 });
      clock.t += PAIRING_LOCKOUT_MS; // the old code expired meanwhile too
      expect((await pairing.approve('telegram', codeOf(await pairing.request('telegram', '9')))).status).toBe('approved');
    });

    it('revoke takes access away; list shows who is pending and approved', async () => {
      const { pairing } = await service();
      await pairing.approve('telegram', codeOf(await pairing.request('telegram', '1', 'one')));
      codeOf(await pairing.request('telegram', '2', 'two'));
      const listed = await pairing.list();
      expect(listed.approved.map((a) => [a.platform, a.userId, a.userName])).toEqual([['telegram', '1', 'one']]);
      expect(listed.pending.map((p) => p.userId)).toEqual(['2']);
      expect(await pairing.revoke('telegram', '1')).toBe(true);
      expect(await pairing.revoke('telegram', '1')).toBe(false);
      expect(await pairing.isApproved('telegram', '1')).toBe(false);
    });

    it('stores only hashes, in the store every process opens, and an approval on one is seen by the others', async () => {
      const at = await temp.location();
      const a = new PairingService((await temp.open(at)).sql);
      const b = new PairingService((await temp.open(at)).sql);
      const code = codeOf(await a.request('telegram', '5'));
      const raw = await (await temp.open(at)).sql.all('SELECT * FROM pairing_requests');
      expect(JSON.stringify(raw)).not.toContain(code);
      expect(JSON.stringify(raw)).toContain(hashPairingCode(code));
      expect((await b.approve('telegram', code)).status).toBe('approved');
      expect(await a.isApproved('telegram', '5')).toBe(true);
    });

    it('parsePlatform accepts known names only', async () => {
      expect(parsePlatform(' Telegram ')).toBe('telegram');
      expect(() => parsePlatform('irc')).toThrow(/unknown platform "irc"/);
    });
  });
});
