/**
 * Start-up when the database is not there yet (PostgreSQL still booting, a network blip): instead of exiting,
 * the process serves /health (alive) and /health/ready (503 naming the store and why) on the admin address and
 * retries with backoff until the store opens. Permanent errors (wrong password, unknown database) are thrown at
 * once: retrying cannot fix them, and the operator gets one clear line instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError, type SessionStore } from '@herald/agent-core';
import type { FastifyInstance } from 'fastify';
import { buildAdminServer } from './server.js';
import type { HeraldConfig } from '../../support/config/load.js';
import type { Logger } from '../../support/logger.js';
import { describeStoreTarget, openConfiguredStore, storeKind, storeTarget } from '../../features/sessions/store-target.js';

const STORE_RETRY_FIRST_MS = 1_000;
const STORE_RETRY_MAX_MS = 30_000;

export async function openStoreWhenReachable(
  config: Pick<HeraldConfig, 'db' | 'databaseUrl' | 'databasePoolSize' | 'host' | 'port'>,
  log: Logger,
  signal?: AbortSignal,
): Promise<SessionStore> {
  const where = describeStoreTarget(storeTarget(config));
  const onIdleError = (err: Error): void => log.warn({ err: err.message }, `database connection lost (${where}); it reconnects on the next query`);
  const onSearchIndexError = (err: unknown): void =>
    log.warn(
      { err: err instanceof Error ? err.message : String(err) },
      'search index: new messages could not be indexed; the next round (or a search) tries again',
    );
  let delay = STORE_RETRY_FIRST_MS;
  let reason = '';
  let waiting: FastifyInstance | null = null;
  try {
    for (;;) {
      try {
        return await openConfiguredStore(config, { onIdleError, background: { onSearchIndexError } });
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        reason = err.message;
      }
      if (!waiting) {
        waiting = await buildAdminServer({
          logger: log,
          checks: [{ name: storeKind(config), check: () => Promise.reject(new Error(`unreachable: ${reason}`)) }],
        });
        await waiting.listen({ host: config.host, port: config.port });
      }
      log.warn({ retryInMs: delay }, `cannot reach the database at ${where} (${reason}); retrying in ${Math.round(delay / 1000)} s`);
      await sleep(delay, undefined, { signal });
      delay = Math.min(delay * 2, STORE_RETRY_MAX_MS);
    }
  } finally {
    await waiting?.close();
  }
}
