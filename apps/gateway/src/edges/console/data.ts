/**
 * What the console's pages read, gathered in one place: the same sources as /health/detailed, the readiness
 * checks and the store's usage queries.
 */
import type { ApprovalAudit } from '../../features/approvals/audit.js';
import type { Queue } from 'bullmq';
import type { DailyUsage, ModelUsage, ProfileUsage, SessionSource, SessionStore } from '@herald/agent-core';
import { InvalidCursorError } from '@herald/agent-core';
import type { Logger } from '../../support/logger.js';
import type { PairingService } from '../../features/pairing/index.js';
import { settle, type DetailedHealth } from '../admin/health-detailed.js';
import type { PriceTable } from '../../features/budgets/prices.js';
import type { Priced } from './costs.js';
import type { Dependency, WeekSpend } from './overview.js';
import type { SessionsView } from './sessions.js';
import type { ProfileTable } from '../../features/profiles/table.js';
import type { Knowledge } from '../../features/prompt/knowledge.js';

const WEEK_MS = 7 * 86_400_000;
/** Sessions (or search hits) on one page. */
const PAGE_SIZE = 50;

export interface ConsoleDeps {
  /** HERALD_ADMIN_TOKEN: what the login form asks for, and the key of the cookie's and CSRF tokens' HMACs. */
  token: string;
  store: SessionStore;
  queue: Queue;
  pairing: PairingService;
  /** The audit of approval decisions (the Approvals page). */
  approvals: ApprovalAudit;
  log: Logger;
  /** /health/detailed's answer for this process. */
  health: () => Promise<DetailedHealth>;
  /** Redis and the store (named `sqlite` or `postgres`), as readiness checks them. */
  dependencies: Array<{ name: string; check: () => Promise<void> }>;
  /** HERALD_PRICES over the built-in table: which models' spend is known ("price unknown" for the others). */
  prices: PriceTable;
  /** The profiles and their skills (the skills page). */
  profiles: ProfileTable;
  knowledge: Knowledge;
}

export async function overviewData(deps: ConsoleDeps): Promise<{ health: DetailedHealth; dependencies: Dependency[]; week: WeekSpend }> {
  const [health, dependencies, week] = await Promise.all([
    deps.health(),
    Promise.all(deps.dependencies.map(async (d) => ({ name: d.name, error: (await settle(d.check())).error }))),
    settle(deps.store.usageByModel({ since: Date.now() - WEEK_MS })),
  ]);
  const models = week.value ?? [];
  return {
    health,
    dependencies,
    week: {
      costUsd: models.reduce((n, m) => n + m.costUsd, 0),
      sessions: models.reduce((n, m) => n + m.sessions, 0),
      models: models.map((m) => m.model),
    },
  };
}

export async function usageData(
  deps: ConsoleDeps,
  days: number,
  now: Date,
): Promise<{ byModel: ModelUsage[]; byProfile: ProfileUsage[]; byDay: DailyUsage[] }> {
  // From the start of the first UTC day in the window.
  const since = Math.floor(now.getTime() / 86_400_000) * 86_400_000 - (days - 1) * 86_400_000;
  const [byModel, byProfile, byDay] = await Promise.all([
    deps.store.usageByModel({ since }),
    deps.store.usageByProfile({ since }),
    deps.store.usageByDay({ since }),
  ]);
  return { byModel, byProfile, byDay };
}

/**
 * The sessions page: a page of sessions with their names, people and last activity (one query), or the search hits
 * and their sessions (two queries however many hits).
 */
export async function sessionsData(deps: ConsoleDeps, ask: { q: string; source?: SessionSource; cursor?: string }, priced: Priced): Promise<SessionsView> {
  const { q, source } = ask;
  const view: SessionsView = {
    q,
    source: source ?? '',
    sessions: [],
    hits: null,
    hitSessions: new Map(),
    nextCursor: null,
    searchError: null,
    priced,
    now: Date.now(),
  };
  if (q) {
    const hits = await deps.store.search(q, { source, limit: PAGE_SIZE });
    const sessions = await deps.store.sessionOverviewsByIds(hits.map((h) => h.sessionId));
    return { ...view, hits, hitSessions: new Map(sessions.map((s) => [s.id, s])) };
  }
  try {
    const page = await deps.store.listSessionOverviews({ source, cursor: ask.cursor, limit: PAGE_SIZE });
    return { ...view, sessions: page.sessions, nextCursor: page.nextCursor };
  } catch (err) {
    if (!(err instanceof InvalidCursorError)) throw err;
    return { ...view, searchError: 'That page link is not valid any more; start from the newest sessions.' };
  }
}
