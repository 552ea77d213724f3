/**
 * Appends that wait for replicas, against a real primary and a real replica (throw-away redis-server processes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, type TestRedis } from '../../../../test/helpers/redis-server.js';
import { waitFor } from '../../../../test/helpers/ports.js';
import { Mailbox, type TurnPayload } from './mailbox.js';
import { ReplicaWait, ReplicationPendingError, type WaitOutcome } from './replica-wait.js';

let primary: TestRedis;
let replica: TestRedis;
let main: Redis;
let appends: Redis;
let onReplica: Redis;
// A replica writes the copy it syncs to disk: into a temp dir, not the working directory.
const dir = mkdtempSync(join(tmpdir(), 'herald-replica-wait-'));

const payload = (text: string): TurnPayload => ({
  text,
  platform: 'telegram',
  conversationId: 'telegram:7',
  chatType: 'dm',
  chatId: '7',
  userId: '7',
  messageId: `7:${text}`,
  platformMessageId: text,
});

beforeAll(async () => {
  primary = await startTestRedis();
  replica = await startTestRedis({ args: ['--dir', dir, '--replicaof', '127.0.0.1', String(primary.port)] });
  [main, appends, onReplica] = [new Redis(primary.url), new Redis(primary.url), new Redis(replica.url)];
  await waitFor(async () => (await main.info('replication')).includes('state=online'), { what: 'the replica in sync' });
});
afterAll(async () => {
  for (const c of [main, appends, onReplica]) c?.disconnect();
  await replica?.stop();
  await primary?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function mailboxWaitingFor(replicas: number, outcomes: WaitOutcome[]): Mailbox {
  const wait = new ReplicaWait(appends, { replicas, timeoutMs: 200, markKey: 'rw:append-mark', onOutcome: (o) => outcomes.push(o) });
  return new Mailbox(main, 'rw', 1_000, wait);
}

describe('appends that wait for replicas (HERALD_REDIS_WAIT_REPLICAS)', () => {
  it('confirmed: once enqueue returns, the replica already holds the entry', async () => {
    const outcomes: WaitOutcome[] = [];
    const res = await mailboxWaitingFor(1, outcomes).enqueue('telegram.7.1', 'k1', payload('one'));
    expect(res).toMatchObject({ status: 'queued', seq: 1 });
    expect(res.unconfirmed).toBeUndefined();
    expect(outcomes).toEqual(['confirmed']);
    // Read straight from the replica, with no wait of our own: WAIT already made sure.
    expect((await onReplica.lrange('rw:mbox:k1', 0, -1)).map((raw) => (JSON.parse(raw) as { id: string }).id)).toEqual(['telegram.7.1']);
  });

  it('too few replicas in time: the entry is kept but reported unconfirmed, and so is its redelivery until replicas confirm', async () => {
    const outcomes: WaitOutcome[] = [];
    const first = await mailboxWaitingFor(2, outcomes).enqueue('telegram.7.2', 'k2', payload('two'));
    expect(first.status).toBe('queued');
    expect(first.unconfirmed).toBeInstanceOf(ReplicationPendingError);
    expect(first.unconfirmed?.message).toBe('fewer than 2 Redis replicas confirmed the message within 200 ms (HERALD_REDIS_WAIT_REPLICAS)');
    const again = await mailboxWaitingFor(2, outcomes).enqueue('telegram.7.2', 'k2', payload('two'));
    expect(again.status).toBe('duplicate');
    expect(again.unconfirmed).toBeInstanceOf(ReplicationPendingError);
    // With what the set-up can give (one replica), the redelivery is confirmed: it wrote a mark WAIT could cover.
    const settled = await mailboxWaitingFor(1, outcomes).enqueue('telegram.7.2', 'k2', payload('two'));
    expect(settled).toMatchObject({ status: 'duplicate' });
    expect(settled.unconfirmed).toBeUndefined();
    expect(outcomes).toEqual(['timeout', 'timeout', 'confirmed']);
    expect(await onReplica.exists('rw:append-mark')).toBe(1);
    expect(await main.llen('rw:mbox:k2')).toBe(1);
  });

  it('a connection replaced between the append and the WAIT never counts as confirmed (a WAIT on the new one covers nothing)', async () => {
    const outcomes: WaitOutcome[] = [];
    const wait = new ReplicaWait(appends, { replicas: 1, timeoutMs: 200, markKey: 'rw:append-mark', onOutcome: (o) => outcomes.push(o) });
    const { outcome } = await wait.after(
      async () => {
        const n = await appends.incr('rw:counter');
        appends.disconnect(true);
        return n;
      },
      () => true,
    );
    expect(outcome).toBe('reconnected');
    expect(wait.refusal('reconnected').message).toMatch(/connection to Redis changed/);
    expect(outcomes).toEqual(['reconnected']);
  });

  it('without a ReplicaWait no WAIT is sent at all (a single Redis pays nothing)', async () => {
    const before = Number(/cmdstat_wait:calls=(\d+)/.exec(await main.info('commandstats'))?.[1] ?? 0);
    await new Mailbox(main, 'rw', 1_000).enqueue('telegram.7.3', 'k3', payload('three'));
    const after = Number(/cmdstat_wait:calls=(\d+)/.exec(await main.info('commandstats'))?.[1] ?? 0);
    expect(after).toBe(before);
  });
});
