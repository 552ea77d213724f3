/**
 * A turn whose database stays down past the turn's own patience (turn/pipeline.ts rideOutStoreOutage) is not a failed job: the
 * worker keeps its message at the head of the mailbox and puts the wake-up off, so BullMQ's attempts stay for the
 * job's own failures (Redis) and the message is answered once the database is back. Real Redis and BullMQ.
 */
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '@herald/agent-core';
import { keyOf, payload, rig, until } from './test-support.js';

describe('a store outage longer than the turn waits', () => {
  it('runs the turn again after a delayed wake-up, without spending a queue attempt, and answers it once', async () => {
    const ran: string[] = [];
    let down = true;
    const { producer, mailbox, queue } = await rig({
      workers: 1,
      mode: 'queue',
      runTurn: async (ctx) => {
        ran.push(ctx.entries[0].payload.text);
        if (down) {
          down = false;
          throw new StoreUnavailableError('connect ECONNREFUSED');
        }
      },
    });
    await producer.submit(keyOf(31), payload(31, 1, 'one'), 'queue');
    await until(() => ran.length >= 2, 20_000);
    await until(async () => (await mailbox.length(keyOf(31))) === 0 && !(await mailbox.isBusy(keyOf(31))), 15_000);
    expect(ran).toEqual(['one', 'one']);
    // One attempt in BullMQ's count: the run that answered (the put-off wake-up is not one; a failure would be).
    const [job] = await queue.getJobs(['completed']);
    expect(job?.attemptsMade).toBe(1);
    expect(await queue.getJobCounts('failed')).toEqual({ failed: 0 });
  }, 30_000);
});
