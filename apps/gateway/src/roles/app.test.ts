/**
 * startHerald in this process: a start-up that fails part-way must not leave connections open behind it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgresSchema } from '../../../../packages/agent-core/src/store/test-support.js';
import { deleteRedisPrefix, uniquePrefix } from '../../../../test/helpers/cluster.js';
import { waitFor } from '../../../../test/helpers/ports.js';
import { startHerald } from './app.js';
import { loadConfig } from '../support/config/load.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Open TCP connections of this process (Redis clients, BullMQ's, the PostgreSQL pool). */
const openSockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;

describe('startHerald', () => {
  it('closes Redis, the queues and the store it opened when a later step fails (the admin port is taken)', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as { port: number }).port;
    const schema = await freshPostgresSchema();
    cleanups.push(() => schema.drop());
    const dir = mkdtempSync(join(tmpdir(), 'herald-app-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const prefix = uniquePrefix('app-start');
    cleanups.push(() => deleteRedisPrefix(prefix));
    const config = loadConfig({
      file: null,
      role: 'all',
      env: {
        REDIS_URL: 'redis://127.0.0.1:6379',
        HERALD_REDIS_PREFIX: prefix,
        HERALD_DATABASE_URL: schema.url,
        HERALD_DB: join(dir, 'herald.db'),
        HERALD_HOST: '127.0.0.1',
        HERALD_PORT: String(port),
      },
    });

    const before = openSockets();
    await expect(startHerald(config, pino({ level: 'silent' }))).rejects.toThrow(/EADDRINUSE/);
    // Everything it connected (main Redis client, control subscriber, two BullMQ queues, the PostgreSQL pool)
    // is closed again; before, they stayed open and kept reconnecting.
    await waitFor(() => openSockets() <= before, { what: 'the connections of the failed start to close' });
    expect(openSockets()).toBeLessThanOrEqual(before);
  });
});
