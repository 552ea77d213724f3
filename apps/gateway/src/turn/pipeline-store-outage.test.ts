import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '@herald/agent-core';
import type { SessionStore } from '@herald/agent-core';
import type { TurnContext, TurnRunner } from '../queue/worker.js';
import { rideOutStoreOutage } from './pipeline.js';
import { untilStored } from '../out/until-stored.js';

const log = pino({ level: 'silent' });
/** `run` behind the store-outage policy, as the pipeline places it. */
const retryThroughStoreOutage =
  (run: TurnRunner, store: Pick<SessionStore, 'ping'>, patienceMs?: number): TurnRunner =>
  (ctx) =>
    rideOutStoreOutage(store, ctx, () => run(ctx), patienceMs);
const ctx = (signal = new AbortController().signal): TurnContext =>
  ({ sessionKey: 'k', entries: [], turnId: 't', fence: 1, signal, touch: () => undefined, log }) as unknown as TurnContext;

describe('riding out a database outage', () => {
  it('a turn that failed because the database went away runs again once it answers, in the same job', async () => {
    let runs = 0;
    let pings = 0;
    const store = {
      ping: async () => {
        if (++pings < 3) throw new StoreUnavailableError('connect ECONNREFUSED');
      },
    };
    const run = retryThroughStoreOutage(async () => {
      if (++runs < 2) throw new StoreUnavailableError('Connection terminated unexpectedly');
      return { afterAck: async () => undefined };
    }, store);
    const result = await run(ctx());
    expect(runs).toBe(2);
    expect(pings).toBe(3); // waited until the database answered, then ran the turn again
    expect(result).toHaveProperty('afterAck');
  });

  it('other errors and aborted turns are not retried; past its patience the error goes to the queue', async () => {
    let runs = 0;
    const boom = retryThroughStoreOutage(
      async () => {
        runs++;
        throw new Error('a bug');
      },
      { ping: async () => undefined },
    );
    await expect(boom(ctx())).rejects.toThrow('a bug');
    expect(runs).toBe(1);

    const aborted = new AbortController();
    aborted.abort();
    const stopped = retryThroughStoreOutage(
      async () => {
        throw new StoreUnavailableError('down');
      },
      { ping: async () => undefined },
    );
    await expect(stopped(ctx(aborted.signal))).rejects.toThrow(StoreUnavailableError);

    const impatient = retryThroughStoreOutage(
      async () => {
        throw new StoreUnavailableError('down');
      },
      { ping: async () => Promise.reject(new StoreUnavailableError('still down')) },
      0,
    );
    await expect(impatient(ctx())).rejects.toThrow(StoreUnavailableError);
  });

  it('a delivered reply is recorded once the database is back, not given up', async () => {
    let tries = 0;
    const recorded = await untilStored(
      async () => {
        if (++tries < 3) throw new StoreUnavailableError('down');
        return 'recorded';
      },
      log,
      'test',
    );
    expect(recorded).toBe('recorded');
    expect(tries).toBe(3);
    await expect(untilStored(async () => Promise.reject(new Error('constraint')), log, 'test')).rejects.toThrow('constraint');
  });
});
