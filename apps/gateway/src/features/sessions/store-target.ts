/**
 * Where the session store lives: `HERALD_DATABASE_URL` (PostgreSQL) when set, else the SQLite file `HERALD_DB`.
 * Every process role and the CLI open it through here, so they always agree, also on the schema: the imports
 * below register the gateway's own tables (pairing, session counters, voice replies, retention, scheduled tasks, spend)
 * with the store's migrations, so whichever command opens a store first creates all of them (the tools' tables
 * come with @herald/agent-core), and `herald store restore` knows every version a backup may hold
 * (store-target.test.ts).
 */
import { isConnectionError, isPostgresUrl, SessionStore, StoreUnavailableError, type StoreOptions } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';
import '../pairing/schema.js';
import './counters.js';
import './known-threads.js';
import './retention.js';
import '../schedules/store.js';
import './voice-replies.js';
import './reasoning-display.js';
import '../budgets/spend-store.js';

export type StoreConfig = Pick<HeraldConfig, 'db' | 'databaseUrl' | 'databasePoolSize'>;

export function storeTarget(config: StoreConfig): string {
  return config.databaseUrl ?? config.db;
}

/** The target for logs and messages: a file path, or the URL without its password. */
export function describeStoreTarget(target: string): string {
  if (!isPostgresUrl(target)) return target;
  try {
    const url = new URL(target);
    url.password = '';
    return url.toString().replace(/:@/, '@');
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** 'sqlite' or 'postgres', as health checks and doctor name the store. */
export function storeKind(config: StoreConfig): 'sqlite' | 'postgres' {
  return isPostgresUrl(storeTarget(config)) ? 'postgres' : 'sqlite';
}

export interface OpenStoreOptions {
  /** Called for pg's errors on idle pooled connections (a server restart): log them, never crash. */
  onIdleError?: (err: Error) => void;
  /**
   * The running gateway: SQLite checkpoints the WAL in a background thread (agent-core sqlite-checkpointer.ts) and
   * indexes new messages for search on a timer (agent-core fts.ts).
   */
  background?: { onSearchIndexError: (err: unknown) => void };
}

/** Opens and migrates the configured store; a database that cannot be reached throws StoreUnavailableError. */
export function openConfiguredStore(config: StoreConfig, opts: OpenStoreOptions = {}): Promise<SessionStore> {
  return openStoreAt(storeTarget(config), {
    poolSize: config.databasePoolSize,
    onIdleError: opts.onIdleError,
    ...(opts.background ? { backgroundCheckpoints: true, backgroundSearchIndex: true, onSearchIndexError: opts.background.onSearchIndexError } : {}),
  });
}

/** Opens and migrates the store at `target` (a SQLite file or a `postgres://` URL), with the same errors. */
export async function openStoreAt(target: string, opts: StoreOptions = {}): Promise<SessionStore> {
  try {
    return await SessionStore.open(target, opts);
  } catch (err) {
    if (isConnectionError(err) && !(err instanceof StoreUnavailableError)) {
      throw new StoreUnavailableError(err instanceof Error ? err.message : String(err), { cause: err });
    }
    throw err;
  }
}

/** Wrong credentials, unknown database or role, a malformed URL: retrying cannot help. */
export function isPermanentStoreError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && ['28P01', '28000', '3D000', '42501'].includes(code);
}
