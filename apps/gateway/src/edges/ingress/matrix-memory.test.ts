/**
 * What a Matrix account's ingress keeps in real Redis: the latest offer in a conversation, written by one process and
 * read by another (a restart, or a second ingress); kept per bot account and conversation; every offer key expires;
 * a damaged or oversized value is no offer, never an error.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MATRIX_OFFER_TTL_MS, RedisMatrixMemory } from './matrix-memory.js';
import { deleteRedisPrefix } from '../../../../../test/helpers/redis-keys.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';

const URL = 'redis://127.0.0.1:6379';
const prefix = testPrefix('mxmemory');
const BOT = '@herald:example.org';
const DM = 'matrix:!dm:example.org';
// Two connections: the process before a restart and the one after (or two ingress processes).
const [a, b] = [new Redis(URL), new Redis(URL)];
const [before, after] = [new RedisMatrixMemory(a, prefix, BOT), new RedisMatrixMemory(b, prefix, BOT)];

afterAll(async () => {
  await deleteRedisPrefix(prefix);
  a.disconnect();
  b.disconnect();
});

describe('RedisMatrixMemory offers', () => {
  it('the latest offer one process kept is read by the other; another conversation or bot account has none', async () => {
    await before.saveOffer(DM, ['hb1:first:0', 'hb1:first:1']);
    await before.saveOffer(DM, ['hb1:latest:0', 'hb1:latest:1', 'hb1:latest:2']);
    expect(await after.loadOffer(DM)).toEqual(['hb1:latest:0', 'hb1:latest:1', 'hb1:latest:2']);
    expect(await after.loadOffer('matrix:!other:example.org')).toBeUndefined();
    expect(await new RedisMatrixMemory(b, prefix, '@other:example.org').loadOffer(DM)).toBeUndefined();
  });

  it('every offer key expires, within the offer lifetime', async () => {
    await before.saveOffer(DM, ['hb1:ttl:0']);
    const ttl = await a.pttl(before.offerKey(DM));
    expect(ttl).toBeGreaterThan(MATRIX_OFFER_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(MATRIX_OFFER_TTL_MS);
  });

  it('a value it cannot read (not JSON, not a list of short strings, too many buttons, too long) is no offer', async () => {
    const bad = ['not json', '{"a":1}', '[1,2]', '[]', JSON.stringify(['x'.repeat(65)]), JSON.stringify(Array(100).fill('d')), `["${'y'.repeat(50_000)}"]`];
    for (const [i, value] of bad.entries()) {
      const conversation = `matrix:!bad${i}:example.org`;
      await a.set(before.offerKey(conversation), value, 'PX', 60_000);
      expect(await after.loadOffer(conversation), value.slice(0, 20)).toBeUndefined();
    }
  });

  it('does not store an offer it could not read back', async () => {
    await before.saveOffer('matrix:!big:example.org', Array(100).fill('d'));
    expect(await a.exists(before.offerKey('matrix:!big:example.org'))).toBe(0);
  });
});
