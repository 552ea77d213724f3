/**
 * What the operator-safety checks report (Redis persistence and eviction, server versions, where the store lives):
 * one finding per check, with the plain consequence of a risky setting and what to change. The same findings are
 * logged at start-up, printed by `herald doctor` and served in `/health/detailed`.
 *
 * A risk the operator knows about and accepts is named in HERALD_ACCEPT_RISKS: its finding then reads `ok` with
 * `accepted: true` (still shown, no longer a warning). An `error` is something BullMQ or the store cannot work with;
 * the gateway refuses to start on one unless it is accepted, and a few (a Redis too old for BullMQ) cannot be.
 */

export const RISK_IDS = [
  'redis-persistence',
  'redis-eviction',
  'redis-version',
  'redis-cluster',
  'sqlite-network-fs',
  'disk-space',
  'postgres-indexes',
  'postgres-version',
] as const;

export type RiskId = (typeof RISK_IDS)[number];

type FindingStatus = 'ok' | 'warn' | 'error';

export interface SafetyFinding {
  id: RiskId;
  /** Display name: `redis persistence`, `sqlite disk`. */
  check: string;
  status: FindingStatus;
  /** What was found, e.g. `RDB snapshots only (save 3600 1 300 100)`. */
  detail: string;
  /** What it risks, in one plain sentence (set when status is not ok, or when an accepted risk remains). */
  risk?: string;
  /** What to change. */
  fix?: string;
  /** True when HERALD_ACCEPT_RISKS names this risk and the finding would otherwise warn or fail. */
  accepted?: boolean;
  /** An error that accepting cannot turn into a warning (BullMQ itself refuses to run). */
  unacceptable?: boolean;
}

/** Findings with the accepted risks turned into `ok` (kept visible with `accepted: true`). */
export function applyAccepted(findings: SafetyFinding[], accepted: readonly string[]): SafetyFinding[] {
  return findings.map((f) => (f.status !== 'ok' && !f.unacceptable && accepted.includes(f.id) ? { ...f, status: 'ok', accepted: true } : f));
}

/** One line a person reads: the finding, what it risks and what to do. */
export function describeFinding(f: SafetyFinding): string {
  const parts = [f.detail];
  if (f.risk) parts.push(f.accepted ? `accepted risk (HERALD_ACCEPT_RISKS=${f.id}): ${f.risk}` : f.risk);
  if (f.fix && !f.accepted) parts.push(`fix: ${f.fix}${f.unacceptable ? '' : ` (or accept the risk with HERALD_ACCEPT_RISKS=${f.id})`}`);
  return parts.join('; ');
}

/** A check that could not run (CONFIG refused, a timeout): reported as a warning naming why. */
export function unknownFinding(id: RiskId, check: string, err: unknown): SafetyFinding {
  return { id, check, status: 'warn', detail: `could not be checked: ${err instanceof Error ? err.message : String(err)}` };
}

const MB = 1024 * 1024;

/** 1.5 GB, 300.0 MB, 12 kB. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 * MB) return `${(n / (1024 * 1024 * MB)).toFixed(1)} TB`;
  if (n >= 1024 * MB) return `${(n / (1024 * MB)).toFixed(1)} GB`;
  if (n >= MB) return `${(n / MB).toFixed(1)} MB`;
  return `${Math.round(n / 1024)} kB`;
}
