/**
 * GET /health/detailed: what an operator looks at first. Every platform's connection (from its ingress'
 * health(); platforms without credentials, or not held by this process, are listed as disabled), the workers
 * heard from through Redis heartbeats (with each one's MCP servers), this process's own MCP servers, queue counts
 * and whether the queue is paused, the turns running across those workers, the operator-safety findings
 * (ops/safety/): what the Redis and store settings risk losing, checked on each request, and the context windows
 * providers named (shared by all workers through the store).
 * Parts that depend on Redis report their error instead of failing the whole answer.
 * It names hosts, pids, queues and key fingerprints, so with HERALD_ADMIN_TOKEN set it asks for the token like
 * /admin does; without one (no admin API at all) it stays open, like /health and /health/ready.
 */
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AdapterHealth, PlatformIngress } from '@herald/adapters';
import { LEARNT_WINDOW_TTL_MS, StoredWindowBook, type SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';
import type { ProviderCatalog } from '../../support/config/providers.js';
import { VERSION } from '../../support/version.js';
import { adminAuth } from './auth.js';
import { listWorkers, type WorkerBeat } from '../../support/ops/heartbeat.js';
import { QUEUE_STATES } from '../../support/ops/metrics.js';
import { redisFindings, storeFindings } from '../../support/ops/safety/checks.js';
import type { SafetyFinding } from '../../support/config/risks.js';
import type { McpServerStatus } from '../../features/mcp/connection.js';
import type { SandboxHealth } from '../../features/sandbox/index.js';

const PLATFORMS = ['telegram', 'discord', 'slack', 'whatsapp', 'matrix'] as const;
/** A Redis outage must not hang the probe: its parts answer with an error after this. */
const PART_TIMEOUT_MS = 2_000;

export interface DetailedHealthDeps {
  config: HeraldConfig;
  redis: Redis;
  queue: Queue | null;
  store: SessionStore;
  ingresses: ReadonlyMap<string, PlatformIngress>;
  /** This process's MCP servers (empty where no turns run). */
  mcpServers: () => McpServerStatus[];
  providers: ProviderCatalog;
  /** execute_code's backend in this process: null where no turns run or no profile offers code. */
  sandbox: () => SandboxHealth | null;
}

/** The backend execute_code runs in (null: none, the tool is not offered) and why the others cannot be used. */
const sandboxSchema = {
  type: ['object', 'null'],
  properties: { backend: { type: ['string', 'null'], enum: ['bubblewrap', 'docker', null] }, unavailable: { type: 'array', items: { type: 'string' } } },
} as const;

const platformSchema = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: ['connected', 'connecting', 'disconnected', 'disabled', 'fatal'] },
    last_event_at: { type: ['string', 'null'], format: 'date-time' },
    error: { type: ['string', 'null'] },
  },
} as const;

/** A JSON-schema array of objects with these properties. */
function listOf<P extends Record<string, unknown>>(properties: P) {
  return { type: 'array', items: { type: 'object', properties } } as const;
}

const mcpServerSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    transport: { type: 'string', enum: ['stdio', 'http'] },
    state: { type: 'string', enum: ['connecting', 'ready', 'backoff', 'stopped'] },
    tools: { type: 'integer' },
    error: { type: ['string', 'null'] },
    since: { type: 'string', format: 'date-time' },
    failures: { type: 'integer' },
    crashes: { type: 'integer' },
    restarts: { type: 'integer' },
    last_error: { type: ['string', 'null'] },
    last_error_at: { type: ['string', 'null'], format: 'date-time' },
    next_attempt_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

const schema = {
  response: {
    200: {
      type: 'object',
      properties: {
        status: { type: 'string' },
        version: { type: 'string' },
        pid: { type: 'integer' },
        role: { type: 'string' },
        uptime_s: { type: 'number' },
        platforms: { type: 'object', additionalProperties: platformSchema },
        workers: listOf({
          id: { type: 'string' },
          host: { type: 'string' },
          pid: { type: 'integer' },
          version: { type: 'string' },
          last_heartbeat_at: { type: 'string', format: 'date-time' },
          running_turns: { type: 'integer' },
          mcp_servers: { type: 'array', items: mcpServerSchema },
          sandbox: sandboxSchema,
        }),
        workers_error: { type: ['string', 'null'] },
        queue: { type: ['object', 'null'], additionalProperties: { type: 'integer' } },
        queue_paused: { type: ['boolean', 'null'] },
        queue_error: { type: ['string', 'null'] },
        active_turns: { type: 'integer' },
        mcp_servers: { type: 'array', items: mcpServerSchema },
        sandbox: sandboxSchema,
        safety: listOf({
          check: { type: 'string' },
          id: { type: 'string' },
          status: { type: 'string', enum: ['ok', 'warn', 'error'] },
          detail: { type: 'string' },
          risk: { type: ['string', 'null'] },
          fix: { type: ['string', 'null'] },
          accepted: { type: 'boolean' },
        }),
        key_pools: {
          type: ['array', 'null'],
          items: {
            type: 'object',
            properties: {
              pool: { type: 'string' },
              strategy: { type: 'string' },
              keys: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    fingerprint: { type: 'string' },
                    state: { type: 'string', enum: ['ready', 'cooling'] },
                    uses: { type: 'integer' },
                    cooldown_remaining_s: { type: ['number', 'null'] },
                    reason: { type: ['string', 'null'] },
                  },
                },
              },
            },
          },
        },
        key_pools_error: { type: ['string', 'null'] },
        context_windows: {
          type: ['array', 'null'],
          items: {
            type: 'object',
            properties: { model: { type: 'string' }, context_limit: { type: 'integer' }, learnt_at: { type: 'string', format: 'date-time' } },
          },
        },
        context_windows_error: { type: ['string', 'null'] },
      },
    },
  },
} as const;

export function detailedHealthRoute(app: FastifyInstance, deps: DetailedHealthDeps): void {
  const started = Date.now();
  const token = deps.config.adminToken;
  app.get('/health/detailed', { schema, onRequest: token ? adminAuth(token) : [] }, async () => detailedHealth(deps, started));
}

/** What /health/detailed answers (also shown by the operator console). */
export async function detailedHealth(deps: DetailedHealthDeps, startedAt: number): Promise<DetailedHealth> {
  const [workers, queue, pools, safety, windows] = await Promise.all([
    settle(listWorkers(deps.redis, deps.config.redisPrefix)),
    settle(queueState(deps.queue)),
    settle(deps.providers.status()),
    safetyFindings(deps),
    settle(new StoredWindowBook(deps.store.sql, LEARNT_WINDOW_TTL_MS).since(Date.now() - LEARNT_WINDOW_TTL_MS)),
  ]);
  const beats: WorkerBeat[] = workers.value ?? [];
  return {
    status: 'ok',
    version: VERSION,
    pid: process.pid,
    role: deps.config.role,
    uptime_s: Math.round((Date.now() - startedAt) / 1000),
    platforms: Object.fromEntries(PLATFORMS.map((p) => [p, platformHealth(p, deps)])),
    workers: beats.map((b) => ({
      id: b.id,
      host: b.host,
      pid: b.pid,
      version: b.version,
      last_heartbeat_at: new Date(b.lastHeartbeatAt).toISOString(),
      running_turns: b.runningTurns,
      mcp_servers: (b.mcpServers ?? []).map(mcpServerJson),
      sandbox: b.sandbox ?? null,
    })),
    workers_error: workers.error,
    queue: queue.value?.counts ?? null,
    queue_paused: queue.value?.paused ?? null,
    queue_error: queue.error,
    active_turns: beats.reduce((n, b) => n + b.runningTurns, 0),
    mcp_servers: deps.mcpServers().map(mcpServerJson),
    sandbox: deps.sandbox(),
    // Keys by fingerprint only: the state every process shares through Redis.
    key_pools:
      pools.value?.map((p) => ({
        pool: p.pool,
        strategy: p.strategy,
        keys: p.keys.map((k) => ({
          fingerprint: k.fingerprint,
          state: k.state,
          uses: k.uses,
          cooldown_remaining_s: k.cooldownRemainingMs === undefined ? null : Math.ceil(k.cooldownRemainingMs / 1000),
          reason: k.reason ?? null,
        })),
      })) ?? null,
    key_pools_error: pools.error,
    // Limits providers named in context-length errors, still trusted: every worker budgets against them.
    context_windows: windows.value?.map((w) => ({ model: w.key, context_limit: w.limit, learnt_at: new Date(w.learntAt).toISOString() })) ?? null,
    context_windows_error: windows.error,
    safety: safety.map(findingJson),
  };
}

interface PlatformHealthJson {
  state: string;
  last_event_at: string | null;
  error: string | null;
}

export interface DetailedHealth {
  status: string;
  version: string;
  pid: number;
  role: string;
  uptime_s: number;
  platforms: Record<string, PlatformHealthJson>;
  workers: Array<{
    id: string;
    host: string;
    pid: number;
    version: string;
    last_heartbeat_at: string;
    running_turns: number;
    mcp_servers: McpServerJson[];
    sandbox: SandboxHealth | null;
  }>;
  workers_error: string | null;
  queue: Record<string, number> | null;
  /** Paused (the queue dashboard's Pause): messages wait, no turn starts until it is resumed. Null: no queue, or Redis did not answer. */
  queue_paused: boolean | null;
  queue_error: string | null;
  active_turns: number;
  mcp_servers: McpServerJson[];
  /** execute_code's backend in this process (each worker's is in `workers`). */
  sandbox: SandboxHealth | null;
  key_pools: Array<{
    pool: string;
    strategy: string;
    keys: Array<{ fingerprint: string; state: string; uses: number; cooldown_remaining_s: number | null; reason: string | null }>;
  }> | null;
  key_pools_error: string | null;
  context_windows: Array<{ model: string; context_limit: number; learnt_at: string }> | null;
  context_windows_error: string | null;
  /** Operator safety checks (ops/safety): what each setting risks, and whether the risk was accepted. */
  safety: Array<Record<string, unknown>>;
}

function platformHealth(platform: (typeof PLATFORMS)[number], deps: DetailedHealthDeps): PlatformHealthJson {
  const ingress = deps.ingresses.get(platform);
  if (ingress) return healthJson(ingress.health());
  const status = deps.config.platforms[platform];
  const why = status.enabled ? `not connected by this process (role ${deps.config.role})` : status.reason;
  return { state: 'disabled', last_event_at: null, error: why };
}

/** Each check bounds its own waits and reports a failure to run as a warning, so this never rejects. */
async function safetyFindings(deps: DetailedHealthDeps): Promise<SafetyFinding[]> {
  const [redis, store] = await Promise.all([redisFindings(deps.redis, deps.config), storeFindings(deps.store, deps.config)]);
  return [...redis, ...store];
}

function findingJson(f: SafetyFinding): Record<string, unknown> {
  return { check: f.check, id: f.id, status: f.status, detail: f.detail, risk: f.risk ?? null, fix: f.fix ?? null, accepted: f.accepted === true };
}

/** One MCP server as /health/detailed shows it: its state now, and the faults since its process started. */
export interface McpServerJson {
  name: string;
  transport: string;
  state: string;
  tools: number;
  error: string | null;
  since: string;
  failures: number;
  crashes: number;
  restarts: number;
  last_error: string | null;
  last_error_at: string | null;
  next_attempt_at: string | null;
}

function isoOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

function mcpServerJson(s: McpServerStatus): McpServerJson {
  // `?? 0` / `?? null`: a heartbeat from a worker of an older version lacks the fault counts.
  return {
    name: s.name,
    transport: s.transport,
    state: s.state,
    tools: s.tools,
    error: s.error,
    since: new Date(s.since).toISOString(),
    failures: s.failures,
    crashes: s.crashes ?? 0,
    restarts: s.restarts ?? 0,
    last_error: s.lastError ?? null,
    last_error_at: isoOrNull(s.lastErrorAt),
    next_attempt_at: isoOrNull(s.nextAttemptAt),
  };
}

function healthJson(h: AdapterHealth): PlatformHealthJson {
  return { state: h.state, last_event_at: h.lastEventAt === null ? null : new Date(h.lastEventAt).toISOString(), error: h.error };
}

async function queueState(queue: Queue | null): Promise<{ counts: Record<string, number>; paused: boolean } | null> {
  if (!queue) return null;
  const [counts, paused] = await Promise.all([queue.getJobCounts(...QUEUE_STATES), queue.isPaused()]);
  return { counts, paused };
}

/** A part of the answer that depends on Redis: its value, or its error after PART_TIMEOUT_MS. */
export async function settle<T>(p: Promise<T>): Promise<{ value: T | null; error: string | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PART_TIMEOUT_MS} ms`)), PART_TIMEOUT_MS);
  });
  try {
    return { value: await Promise.race([p, timeout]), error: null };
  } catch (err) {
    return { value: null, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
