/**
 * Prometheus metrics, one registry per process (never prom-client's global one, so tests and several gateways in
 * one process never share counters). Every process serves its own `/metrics`; Prometheus sums across processes.
 *
 * Counting happens where the thing happens: the router counts messages (edges/ingress/inbound-guard.ts), the turn wrapper
 * counts turns and deliveries (turn/instrument.ts), the provider wrapper counts LLM requests and tokens. Gauges
 * that describe state (queue depth, active turns, MCP servers) are read at scrape time through `setSources`; so are
 * the MCP servers' crash and restart counts, which their connections keep (features/mcp/connection.ts).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Turn durations run from a cached reply (well under a second) to long tool loops (minutes). */
const TURN_BUCKETS_S = [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600];
/** One LLM request: first token to last, streaming included. */
const LLM_BUCKETS_S = [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed'] as const;

/** Each token count of a call's usage and its `kind` label (herald_llm_tokens_total, herald_profile_tokens_total). */
export const TOKEN_KINDS = [
  ['input', 'input'],
  ['output', 'output'],
  ['cacheRead', 'cache_read'],
  ['cacheWrite', 'cache_write'],
] as const;

export type TurnOutcome = 'delivered' | 'failed' | 'interrupted' | 'abandoned' | 'error';

/** What the metrics need of one MCP server's status (features/mcp/connection.ts: McpServerStatus). */
export interface McpServerFaults {
  name: string;
  state: string;
  crashes: number;
  restarts: number;
}

/** What the gauges read at scrape time; each is optional because not every role has every part. */
interface MetricSources {
  queueCounts?: () => Promise<Partial<Record<string, number>>>;
  queuePaused?: () => Promise<boolean>;
  activeTurns?: () => number;
  /** This process's MCP servers (processes that run turns). */
  mcpServers?: () => readonly McpServerFaults[];
}

export interface HeraldMetrics {
  readonly registry: Registry;
  readonly messagesReceived: Counter<'platform'>;
  readonly rateLimited: Counter<'platform'>;
  readonly turns: Counter<'outcome'>;
  readonly turnDuration: Histogram<'outcome'>;
  readonly llmRequests: Counter<'provider' | 'model' | 'status'>;
  readonly llmLatency: Histogram<'provider' | 'model'>;
  readonly tokens: Counter<'provider' | 'kind'>;
  readonly deliveryFailures: Counter<'platform'>;
  readonly possibleDuplicateReplies: Counter<'platform'>;
  /** Mailbox appends' WAIT for replicas (HERALD_REDIS_WAIT_REPLICAS), by outcome: confirmed, timeout, reconnected. */
  readonly replicaWaits: Counter<'outcome'>;
  readonly compressions: Counter<'reason'>;
  /** Estimated spend (the price table) and tokens per agent profile and model; the prompt-cache hit ratio. */
  readonly spendUsd: Counter<'profile' | 'model'>;
  readonly profileTokens: Counter<'profile' | 'model' | 'kind'>;
  readonly cacheHitRatio: Gauge<'profile' | 'model'>;
  readonly queueDepth: Gauge<'state'>;
  readonly activeTurns: Gauge;
  readonly mcpServerUp: Gauge<'server'>;
  readonly mcpServerCrashes: Counter<'server'>;
  readonly mcpServerRestarts: Counter<'server'>;
  /** Wires the scrape-time sources once the queue and worker exist. */
  setSources(sources: MetricSources): void;
  /** The text exposition and its content type, for GET /metrics. */
  render(): Promise<{ contentType: string; body: string }>;
}

export function createHeraldMetrics(opts: { defaultMetrics?: boolean } = {}): HeraldMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let sources: MetricSources = {};

  const queueDepth = new Gauge({
    name: 'herald_queue_jobs',
    help: 'Turn jobs in the BullMQ queue, by state',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      if (!sources.queueCounts) return;
      // A scrape during a Redis outage still answers: the gauge keeps its last value, the rest is served.
      const counts = await sources.queueCounts().catch(() => null);
      if (!counts) return;
      for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
    },
  });
  new Gauge({
    name: 'herald_queue_paused',
    help: "1 while the turn queue is paused (the queue dashboard's Pause): messages wait and no turn starts",
    registers,
    async collect() {
      if (!sources.queuePaused) return;
      const paused = await sources.queuePaused().catch(() => null);
      if (paused !== null) this.set(paused ? 1 : 0);
    },
  });
  const activeTurns = new Gauge({
    name: 'herald_active_turns',
    help: 'Turns running in this process right now',
    registers,
    collect() {
      if (sources.activeTurns) this.set(sources.activeTurns());
    },
  });

  const mcp = mcpServerMetrics(registers, () => sources.mcpServers?.() ?? []);
  const llm = llmMetrics(registers);

  return {
    registry,
    messagesReceived: new Counter({
      name: 'herald_messages_received_total',
      help: 'Messages from allowed users handed over by a platform ingress (rate-limited ones included)',
      labelNames: ['platform'] as const,
      registers,
    }),
    rateLimited: new Counter({
      name: 'herald_messages_rate_limited_total',
      help: 'Messages dropped because their sender was over HERALD_USER_RATE_LIMIT',
      labelNames: ['platform'] as const,
      registers,
    }),
    turns: new Counter({
      name: 'herald_turns_total',
      help: 'Turns run by this process, by outcome (delivered, failed, interrupted, abandoned, error)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    turnDuration: new Histogram({
      name: 'herald_turn_duration_seconds',
      help: 'Wall time of one turn, from taking it off the mailbox to the reply being delivered',
      labelNames: ['outcome'] as const,
      buckets: TURN_BUCKETS_S,
      registers,
    }),
    deliveryFailures: new Counter({
      name: 'herald_delivery_failures_total',
      help: 'Replies that could not be delivered to the platform after retries',
      labelNames: ['platform'] as const,
      registers,
    }),
    possibleDuplicateReplies: new Counter({
      name: 'herald_possible_duplicate_replies_total',
      help: 'Replies sent again after a crash between sending and recording, on platforms that cannot tell (Telegram)',
      labelNames: ['platform'] as const,
      registers,
    }),
    replicaWaits: new Counter({
      name: 'herald_redis_replica_waits_total',
      help: 'Mailbox appends that waited for Redis replicas (HERALD_REDIS_WAIT_REPLICAS), by outcome: confirmed, timeout (too few replicas in time), reconnected (the connection changed meanwhile); the message is acknowledged only when confirmed',
      labelNames: ['outcome'] as const,
      registers,
    }),
    compressions: new Counter({
      name: 'herald_compressions_total',
      help: 'Context compressions: made by a turn (before it at 85 %, or inside the loop) or by /compress',
      labelNames: ['reason'] as const,
      registers,
    }),
    queueDepth,
    activeTurns,
    ...llm,
    ...mcp,
    setSources(next) {
      sources = { ...sources, ...next };
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** The model calls of this process: requests, latency and tokens per provider; spend, tokens and the prompt cache's
 * hit ratio per agent profile and model. */
function llmMetrics(registers: Registry[]) {
  return {
    llmRequests: new Counter({
      name: 'herald_llm_requests_total',
      help: 'Requests sent to LLM providers, by provider, model and status (ok or the error kind)',
      labelNames: ['provider', 'model', 'status'] as const,
      registers,
    }),
    llmLatency: new Histogram({
      name: 'herald_llm_request_duration_seconds',
      help: 'Duration of successful LLM requests, streaming included',
      labelNames: ['provider', 'model'] as const,
      buckets: LLM_BUCKETS_S,
      registers,
    }),
    tokens: new Counter({
      name: 'herald_llm_tokens_total',
      help: 'Tokens reported by LLM providers, by kind',
      labelNames: ['provider', 'kind'] as const,
      registers,
    }),
    spendUsd: new Counter({
      name: 'herald_llm_cost_usd_total',
      help: 'Estimated LLM spend in USD (HERALD_PRICES over the built-in table), by agent profile and model',
      labelNames: ['profile', 'model'] as const,
      registers,
    }),
    profileTokens: new Counter({
      name: 'herald_llm_profile_tokens_total',
      help: 'LLM tokens by agent profile, model and kind (input, output, cache_read, cache_write)',
      labelNames: ['profile', 'model', 'kind'] as const,
      registers,
    }),
    cacheHitRatio: new Gauge({
      name: 'herald_llm_cache_hit_ratio',
      help: 'Share of prompt tokens read from the provider cache since this process started, by agent profile and model',
      labelNames: ['profile', 'model'] as const,
      registers,
    }),
  };
}

/**
 * Per MCP server of this process: up or not, and its crashes and restarts since the process started. The
 * connections count; a scrape copies their counts (a counter set to a count that only grows stays a counter).
 */
function mcpServerMetrics(registers: Registry[], servers: () => readonly McpServerFaults[]) {
  return {
    mcpServerUp: new Gauge({
      name: 'herald_mcp_server_up',
      help: "Whether this process's MCP server is ready to take calls (1) or not (0: starting, down, backing off)",
      labelNames: ['server'] as const,
      registers,
      collect() {
        for (const s of servers()) this.set({ server: s.name }, s.state === 'ready' ? 1 : 0);
      },
    }),
    mcpServerCrashes: new Counter({
      name: 'herald_mcp_server_crashes_total',
      help: 'Times an MCP server of this process went down after it had been ready (exited, closed, stopped answering)',
      labelNames: ['server'] as const,
      registers,
      collect() {
        copyCounts(this, servers(), (s) => s.crashes);
      },
    }),
    mcpServerRestarts: new Counter({
      name: 'herald_mcp_server_restarts_total',
      help: 'Times this process started an MCP server again after it went down or failed to start',
      labelNames: ['server'] as const,
      registers,
      collect() {
        copyCounts(this, servers(), (s) => s.restarts);
      },
    }),
  };
}

function copyCounts(counter: Counter<'server'>, servers: readonly McpServerFaults[], count: (s: McpServerFaults) => number): void {
  counter.reset();
  for (const s of servers) counter.inc({ server: s.name }, count(s));
}
