import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../test/helpers/ports.js';
import { startTestRedis } from '../../../../test/helpers/redis-server.js';
import { createRedis } from './redis.js';
import { logConnectionErrors } from './redis-errors.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('logConnectionErrors', () => {
  it('logs an outage once, not once per reconnect attempt, and says when the connection is back', async () => {
    const server = await startTestRedis();
    cleanups.push(() => server.stop());
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    // Reconnects every 20 ms: an outage produces an error event each time.
    const client = createRedis({ url: server.url }, { retryStrategy: () => 20 });
    cleanups.push(async () => client.disconnect());
    logConnectionErrors(log, 'main', client);
    let errors = 0;
    client.on('error', () => errors++);
    await client.connect();
    const said = (msg: string): Array<Record<string, unknown>> => lines.filter((l) => l.msg === msg);

    await server.stop();
    await waitFor(() => errors >= 20, { what: '20 reconnect failures' });
    const first = said('redis error');
    // One line per distinct error (connection refused; at most the reset of the dropped connection too).
    expect(first.length).toBeGreaterThanOrEqual(1);
    expect(first.length).toBeLessThanOrEqual(3);
    expect(first[0]).toMatchObject({ level: 40, connection: 'main' });

    await server.start();
    const back = await waitFor(() => said('redis connection ready again')[0], { what: 'the line saying it is back' });
    expect(back).toMatchObject({ level: 30, connection: 'main' });
    expect(back.errors).toBeGreaterThanOrEqual(20);

    // A later outage is a new one: logged again.
    const loggedBefore = said('redis error').length;
    await server.stop();
    await waitFor(() => said('redis error').length > loggedBefore, { what: 'the second outage to be logged' });
  });
});
