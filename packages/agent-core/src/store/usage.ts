/**
 * Usage and spend from the sessions table, for the operator console: totals per model and per agent profile, and
 * per day and model.
 * A session's tokens and estimated cost count for the model it is recorded with (`sessions.model`) and the UTC day
 * it started on. The same SQL on SQLite and PostgreSQL (integer division makes the day on both).
 */
import type { Sql, SqlValue } from './sql.js';

const DAY_MS = 86_400_000;

export interface UsageFilter {
  /** Only sessions started at or after this time (ms). */
  since?: number;
}

export interface ModelUsage {
  /** `provider:model`, or null for sessions that never had one (no model configured). */
  model: string | null;
  sessions: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
}

/** The same sums per agent profile (sessions recorded without one belong to `default`). */
export type ProfileUsage = Omit<ModelUsage, 'model'> & { profile: string };

export interface DailyUsage extends ModelUsage {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
}

interface UsageRow {
  model: string | null;
  sessions: number;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  cost_usd: number | null;
}

const SUMS = `count(*) AS sessions, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
  sum(cache_read_tokens) AS cache_read_tokens, sum(cache_write_tokens) AS cache_write_tokens, sum(estimated_cost_usd) AS cost_usd`;

function where(f: UsageFilter): { clause: string; params: SqlValue[] } {
  return f.since === undefined ? { clause: '', params: [] } : { clause: 'WHERE started_at >= ?', params: [f.since] };
}

function toUsage(r: UsageRow): ModelUsage {
  return {
    model: r.model,
    sessions: Number(r.sessions),
    inputTokens: Number(r.input_tokens ?? 0),
    outputTokens: Number(r.output_tokens ?? 0),
    cacheReadTokens: Number(r.cache_read_tokens ?? 0),
    cacheWriteTokens: Number(r.cache_write_tokens ?? 0),
    costUsd: Number(r.cost_usd ?? 0),
  };
}

/** Per model, the most expensive first. */
export async function usageByModel(sql: Sql, f: UsageFilter = {}): Promise<ModelUsage[]> {
  const w = where(f);
  const rows = await sql.all<UsageRow>(`SELECT model, ${SUMS} FROM sessions ${w.clause} GROUP BY model`, w.params);
  return rows.map(toUsage).sort((a, b) => b.costUsd - a.costUsd || b.sessions - a.sessions || byModelName(a, b));
}

/** Per agent profile, the most expensive first. */
export async function usageByProfile(sql: Sql, f: UsageFilter = {}): Promise<ProfileUsage[]> {
  const w = where(f);
  const rows = await sql.all<UsageRow & { profile: string }>(
    `SELECT coalesce(profile, 'default') AS profile, NULL AS model, ${SUMS} FROM sessions ${w.clause} GROUP BY coalesce(profile, 'default')`,
    w.params,
  );
  return rows
    .map(({ profile, ...r }) => {
      const { model: _none, ...sums } = toUsage(r);
      return { profile, ...sums };
    })
    .sort((a, b) => b.costUsd - a.costUsd || b.sessions - a.sessions || a.profile.localeCompare(b.profile));
}

/** Per UTC day and model, oldest day first. */
export async function usageByDay(sql: Sql, f: UsageFilter = {}): Promise<DailyUsage[]> {
  const w = where(f);
  const rows = await sql.all<UsageRow & { day: number }>(
    `SELECT started_at / ${DAY_MS} AS day, model, ${SUMS} FROM sessions ${w.clause} GROUP BY started_at / ${DAY_MS}, model`,
    w.params,
  );
  return rows
    .map((r) => ({ ...toUsage(r), day: new Date(Number(r.day) * DAY_MS).toISOString().slice(0, 10) }))
    .sort((a, b) => a.day.localeCompare(b.day) || byModelName(a, b));
}

/** By name, sessions without a model last. */
function byModelName(a: ModelUsage, b: ModelUsage): number {
  if (a.model === b.model) return 0;
  if (a.model === null) return 1;
  if (b.model === null) return -1;
  return a.model.localeCompare(b.model);
}
