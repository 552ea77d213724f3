/**
 * Runs the operator-safety checks that apply to this process's Redis and store, each bounded in time and each
 * failing on its own (a check that cannot run is a warning naming why), and applies HERALD_ACCEPT_RISKS.
 */
import type { Redis } from 'ioredis';
import type { SessionStore } from '@herald/agent-core';
import type { Logger } from '../../logger.js';
import { applyAccepted, describeFinding, unknownFinding, type RiskId, type SafetyFinding } from '../../config/risks.js';
import { checkRedis } from './redis-checks.js';
import { checkSqlite } from './sqlite-checks.js';
import { checkPostgres } from './postgres-checks.js';

/** A check waits this long for Redis or the database before it reports that it could not run. */
const SAFETY_CHECK_TIMEOUT_MS = 2_000;

export interface SafetySettings {
  acceptRisks: readonly string[];
  storeMinFreeMb: number;
  /** The SQLite file (ignored when the store is PostgreSQL). */
  db: string;
}

export async function redisFindings(redis: Redis, settings: Pick<SafetySettings, 'acceptRisks'>): Promise<SafetyFinding[]> {
  const found = await bounded(checkRedis(redis)).catch((err: unknown) => [unknownFinding('redis-persistence', 'redis settings', err)]);
  return applyAccepted(found, settings.acceptRisks);
}

export async function storeFindings(store: SessionStore, settings: SafetySettings): Promise<SafetyFinding[]> {
  let found: SafetyFinding[];
  if (store.dialect === 'postgres') {
    found = await bounded(checkPostgres(store.sql)).catch((err: unknown) => [unknownFinding('postgres-indexes' satisfies RiskId, 'postgres', err)]);
  } else {
    try {
      found = checkSqlite(settings.db, { minFreeMb: settings.storeMinFreeMb });
    } catch (err) {
      found = [unknownFinding('disk-space', 'sqlite', err)];
    }
  }
  return applyAccepted(found, settings.acceptRisks);
}

/** Start-up: one line per finding that is not plainly ok; accepted risks at info so they stay on record. */
export function logFindings(log: Logger, findings: SafetyFinding[]): void {
  for (const f of findings) {
    const fields = { check: f.check, risk: f.id };
    if (f.status === 'error') log.error(fields, `${f.check}: ${describeFinding(f)}`);
    else if (f.status === 'warn') log.warn(fields, `${f.check}: ${describeFinding(f)}`);
    else if (f.accepted) log.info(fields, `${f.check}: ${describeFinding(f)}`);
  }
}

/** Findings the gateway refuses to start with (errors not accepted). */
export function refusals(findings: SafetyFinding[]): SafetyFinding[] {
  return findings.filter((f) => f.status === 'error');
}

export class UnsafeSetupError extends Error {
  override name = 'UnsafeSetupError';
  constructor(readonly findings: SafetyFinding[]) {
    super(findings.map((f) => `${f.check}: ${describeFinding(f)}`).join('\n'));
  }
}

function bounded<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SAFETY_CHECK_TIMEOUT_MS} ms`)), SAFETY_CHECK_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
