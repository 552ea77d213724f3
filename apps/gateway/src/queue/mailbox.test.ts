import { beforeAll, describe, expect, it } from 'vitest';
import { useTestRedis } from '../../../../test/helpers/redis.js';
import { Mailbox, type TurnPayload } from './mailbox.js';

const { redis, prefix } = useTestRedis('mailbox');
let mb: Mailbox;

const payload = (text: string): TurnPayload => ({
  text,
  platform: 'telegram',
  conversationId: 'telegram:42',
  chatType: 'dm',
  chatId: '42',
  userId: '42',
  messageId: `42:${text}`,
  platformMessageId: text,
});

beforeAll(() => {
  mb = new Mailbox(redis, prefix, 1_000);
});

describe('Mailbox', () => {
  it('appends in arrival order with increasing seq, and drops a redelivered message', async () => {
    const k = 'agent:main:telegram:dm:1';
    const a = await mb.enqueue('telegram.1.1', k, payload('a'));
    const b = await mb.enqueue('telegram.1.2', k, payload('b'));
    const again = await mb.enqueue('telegram.1.1', k, payload('a'));
    expect(a).toMatchObject({ status: 'queued', seq: 1, position: 1, busy: false });
    expect(b).toMatchObject({ status: 'queued', seq: 2, position: 2 });
    expect(again).toEqual({ status: 'duplicate' });
    expect((await mb.head(k))?.entry.payload.text).toBe('a');
    expect((await mb.pending(k)).map((p) => p.entry.seq)).toEqual([2]);
  });

  it('remembers a message for an hour after its turn was acknowledged (the one redelivery window)', async () => {
    const k = 'agent:main:telegram:dm:ttl';
    await mb.enqueue('telegram.ttl.1', k, payload('x'));
    expect(await redis.ttl(mb.key('seen', 'telegram.ttl.1'))).toBeGreaterThan(3600); // while pending: a day
    const lock = await mb.acquire(k, 'w1');
    if (!('token' in lock)) throw new Error('lock');
    expect(await mb.ack(k, lock.token, (await mb.head(k))!.raw)).toBe(0);
    const ttl = await redis.ttl(mb.key('seen', 'telegram.ttl.1'));
    expect(ttl).toBeGreaterThan(3590);
    expect(ttl).toBeLessThanOrEqual(3600);
    expect(await mb.enqueue('telegram.ttl.1', k, payload('x'))).toEqual({ status: 'duplicate' });
  });

  it('tells whether an entry (by id and arrival number) is still waiting, without the job carrying it', async () => {
    const k = 'agent:main:telegram:dm:holds';
    const a = await mb.enqueue('telegram.holds.1', k, payload('first'));
    const b = await mb.enqueue('telegram.holds.2', k, payload('second'));
    if (a.status !== 'queued' || b.status !== 'queued') throw new Error('not queued');
    expect(await mb.holds(k, 'telegram.holds.1', a.seq)).toBe(true);
    expect(await mb.holds(k, 'telegram.holds.2', b.seq)).toBe(true);
    expect(await mb.holds(k, 'telegram.holds.2', a.seq)).toBe(false);
    expect(await mb.holds(k, 'telegram.holds.1', b.seq)).toBe(false);
    const lock = await mb.acquire(k, 'w1');
    if (!('token' in lock)) throw new Error('lock');
    await mb.ack(k, lock.token, (await mb.head(k))!.raw);
    expect(await mb.holds(k, 'telegram.holds.1', a.seq)).toBe(false);
    expect(await mb.holds(k, 'telegram.holds.2', b.seq)).toBe(true);
  });

  it('looks at a steer marker in the same round trip as the append: present, the message is a steer with its own cap', async () => {
    const k = 'agent:main:telegram:dm:steer';
    const marker = `${prefix}:clarify:${k}`;
    const when = { marker, maxLength: 2 };
    expect(await mb.enqueue('telegram.steer.1', k, payload('plain'), 10, when)).toMatchObject({ status: 'queued', steer: false });
    await redis.set(marker, '1', 'PX', 60_000);
    expect(await mb.enqueue('telegram.steer.2', k, payload('answer'), 10, when)).toMatchObject({ status: 'queued', steer: true, position: 2 });
    // The steer cap (2) applies while the marker exists, not the mode's (10).
    expect(await mb.enqueue('telegram.steer.3', k, payload('more'), 10, when)).toEqual({ status: 'full', pending: 2 });
    await redis.del(marker);
    expect(await mb.enqueue('telegram.steer.3', k, payload('more'), 10, when)).toMatchObject({ status: 'queued', steer: false });
  });

  it('caps the mailbox and forgets a refused message so a later retry can get in', async () => {
    const k = 'agent:main:telegram:dm:cap';
    for (let i = 0; i < 3; i++) expect((await mb.enqueue(`telegram.cap.${i}`, k, payload(`m${i}`), 3)).status).toBe('queued');
    expect(await mb.enqueue('telegram.cap.3', k, payload('m3'), 3)).toEqual({ status: 'full', pending: 3 });
    expect(await redis.exists(mb.key('seen', 'telegram.cap.3'))).toBe(0);
  });

  it('gives the lock to one holder at a time, with increasing fences, and releases only when empty', async () => {
    const k = 'agent:main:telegram:dm:lock';
    await mb.enqueue('telegram.lock.1', k, payload('one'));
    const first = await mb.acquire(k, 'w1');
    const second = await mb.acquire(k, 'w2');
    if (!('token' in first)) throw new Error('first acquire should win');
    expect('heldForMs' in second).toBe(true);
    expect(await mb.isBusy(k)).toBe(true);

    expect(await mb.releaseIfEmpty(k, first.token)).toBe(0); // an entry is waiting: keep the lock
    await mb.enqueue('telegram.lock.2', k, payload('two'));
    const head = await mb.head(k);
    expect(await mb.ack(k, first.token, head!.raw)).toBe(1); // one left: the lock stays
    expect(await mb.isBusy(k)).toBe(true);
    const next = await mb.head(k);
    expect(await mb.ack(k, first.token, next!.raw)).toBe(0); // empty: acknowledged and released in one step
    expect(await mb.isBusy(k)).toBe(false);

    const third = await mb.acquire(k, 'w2');
    if (!('token' in third)) throw new Error('lock should be free');
    expect(third.fence).toBeGreaterThan(first.fence);
    // The old holder's token is dead: it can neither renew, ack nor deliver.
    expect(await mb.renew(k, first.token)).toBe(false);
    expect(await mb.ack(k, first.token, head!.raw)).toBe(-1);
    expect(await mb.canDeliver(k, first.token, 99)).toBe(false);
    await mb.release(k, third.token);
  });

  it("take: an empty mailbox is nothing to do (no lock, no new fence); a held one says whether the job's entry waits", async () => {
    const k = 'agent:main:telegram:dm:take';
    const before = await mb.nextFence(k);
    expect(await mb.take(k, 'w1', { entryId: 'telegram.take.1', seq: 1 })).toEqual({ status: 'empty' });
    expect(await mb.isBusy(k)).toBe(false);
    expect(await redis.get(mb.key('fence', k))).toBe(String(before));

    const a = await mb.enqueue('telegram.take.1', k, payload('one'));
    const b = await mb.enqueue('telegram.take.2', k, payload('two'));
    if (a.status !== 'queued' || b.status !== 'queued') throw new Error('not queued');
    const got = await mb.take(k, 'w1', { entryId: 'telegram.take.2', seq: b.seq });
    if (got.status !== 'acquired') throw new Error(`expected the lock, got ${got.status}`);
    expect(got.fence).toBeGreaterThan(before);
    expect(got.token).toBe(`w1:${got.fence}`);
    expect(got.head.entry).toMatchObject({ id: 'telegram.take.1', seq: a.seq, payload: { text: 'one' } });

    const other = await mb.take(k, 'w2', { entryId: 'telegram.take.2', seq: b.seq });
    expect(other).toMatchObject({ status: 'held', holds: true });
    expect(other.status === 'held' && other.heldForMs).toBeGreaterThan(0);
    expect(await mb.take(k, 'w2', { entryId: 'telegram.take.2', seq: a.seq })).toMatchObject({ status: 'held', holds: false });

    // The ack hands the holder its next entry, then releases with the last one.
    const first = await mb.ackAndNext(k, got.token, got.head.raw);
    expect(first.left).toBe(1);
    expect(first.next?.entry).toMatchObject({ id: 'telegram.take.2', seq: b.seq });
    expect(await mb.ackAndNext(k, got.token, first.next!.raw)).toEqual({ left: 0, next: null });
    expect(await mb.isBusy(k)).toBe(false);
    expect(await mb.ackAndNext(k, got.token, first.next!.raw)).toEqual({ left: -1, next: null });
  });

  it('lets a lock expire when its holder stops renewing', async () => {
    const k = 'agent:main:telegram:dm:expire';
    const a = await mb.acquire(k, 'w1');
    expect('token' in a).toBe(true);
    await new Promise((r) => setTimeout(r, 1_100));
    const b = await mb.acquire(k, 'w2');
    expect('token' in b).toBe(true);
  });

  it('marks a running turn stale when a later message interrupts it', async () => {
    const k = 'agent:main:telegram:dm:intr';
    await mb.enqueue('telegram.intr.1', k, payload('first'));
    const lock = await mb.acquire(k, 'w1');
    if (!('token' in lock)) throw new Error('lock');
    expect(await mb.canDeliver(k, lock.token, 1)).toBe(true);
    const second = await mb.enqueue('telegram.intr.2', k, payload('second'));
    expect(second).toMatchObject({ status: 'queued', busy: true, position: 2 });
    await mb.markInterrupt(k, 2);
    expect(await mb.canDeliver(k, lock.token, 1)).toBe(false);
    expect(await mb.canDeliver(k, lock.token, 2)).toBe(true);
  });

  it('/stop drops pending entries and breaks the lock of even a hung holder', async () => {
    const k = 'agent:main:telegram:dm:stop';
    for (let i = 0; i < 3; i++) await mb.enqueue(`telegram.stop.${i}`, k, payload(`s${i}`));
    const lock = await mb.acquire(k, 'hung');
    if (!('token' in lock)) throw new Error('lock');
    const stopped = await mb.stop(k);
    expect(stopped).toMatchObject({ wasBusy: true, dropped: 2 });
    // The fence a /stop signal names: above the stopped turn's, below any later holder's.
    expect(stopped.fence).toBeGreaterThan(lock.fence);
    const next = await mb.acquire(k, 'next');
    if (!('token' in next)) throw new Error('lock');
    expect(next.fence).toBeGreaterThan(stopped.fence);
    await mb.release(k, next.token);
    expect(await mb.length(k)).toBe(0);
    expect(await mb.isBusy(k)).toBe(false);
    expect(await mb.canDeliver(k, lock.token, 3)).toBe(false);
    expect(await mb.stop(k)).toMatchObject({ wasBusy: false, dropped: 0 });
  });

  it('acknowledges at most once per window', async () => {
    const k = 'agent:main:telegram:dm:ack';
    expect(await mb.mayAcknowledge(k, 30)).toBe(true);
    expect(await mb.mayAcknowledge(k, 30)).toBe(false);
  });

  it('does not acknowledge a message that arrives while the running turn sends its reply; the next turn is acknowledged again', async () => {
    const k = 'agent:main:telegram:dm:replying';
    const a = await mb.enqueue('telegram.rep.1', k, payload('first'));
    if (a.status !== 'queued') throw new Error('not queued');
    const lock = await mb.acquire(k, 'w1');
    if (!('token' in lock)) throw new Error('lock');
    // A progress check (no head seq) does not mark the session as replying.
    expect(await mb.deliveryCheck(k, lock.token, a.seq)).toBe('ok');
    await mb.enqueue('telegram.rep.2', k, payload('second'));
    expect(await mb.mayAcknowledge(k, 30)).toBe(true);
    await redis.del(mb.key('ack', k));
    // The final reply's check marks it: a message arriving now is answered next, with no "queued" note.
    expect(await mb.deliveryCheck(k, lock.token, a.seq, a.seq)).toBe('ok');
    await mb.enqueue('telegram.rep.3', k, payload('third'));
    expect(await mb.mayAcknowledge(k, 30)).toBe(false);
    // The first turn is acknowledged: the marker it left names an entry that is gone, so the second turn's
    // followers are told they wait again.
    expect(await mb.ack(k, lock.token, (await mb.head(k))!.raw)).toBe(2);
    expect(await mb.mayAcknowledge(k, 30)).toBe(true);
  });

  it('a stale or lost check marks nothing', async () => {
    const k = 'agent:main:telegram:dm:replying-lost';
    const a = await mb.enqueue('telegram.repl.1', k, payload('first'));
    if (a.status !== 'queued') throw new Error('not queued');
    expect(await mb.deliveryCheck(k, 'not-the-holder', a.seq, a.seq)).toBe('lock_lost');
    expect(await redis.exists(mb.key('replying', k))).toBe(0);
  });
});

describe('Mailbox key hygiene', () => {
  it('gives the per-session counters a TTL so keys of finished conversations do not pile up', async () => {
    const k = 'agent:main:telegram:dm:hygiene';
    await mb.enqueue('telegram.hyg.1', k, payload('x'));
    const lock = await mb.acquire(k, 'w1');
    expect(await redis.ttl(mb.key('seq', k))).toBeGreaterThan(29 * 24 * 3600);
    expect(await redis.ttl(mb.key('fence', k))).toBeGreaterThan(29 * 24 * 3600);
    if ('token' in lock) await mb.release(k, lock.token);
  });
});
