/**
 * Metrics around the two things a worker does — run turns and call LLMs — by wrapping them, so neither the turn
 * runner nor the agent loop needs to know metrics exist. The turn's outcome is what the runner returns
 * (TurnResult.outcome, from the outbox rows its own writes returned); only a run that cannot tell is read back.
 */
import { performance } from 'node:perf_hooks';
import { ProviderError, type Provider, type SessionStore, type TurnStatus } from '@herald/agent-core';
import { TurnAbort, type AroundTurn, type TurnContext, type TurnOutcomeKind, type TurnResult, type TurnRunner } from '../queue/worker.js';
import { DeliveryError } from '../out/send-reply.js';
import type { AgentRuntime } from './agent-runtime.js';
import type { Logger } from '../support/logger.js';
import { TOKEN_KINDS, type HeraldMetrics, type TurnOutcome as OutcomeLabel } from '../support/ops/metrics.js';

export interface TurnMetricsDeps {
  metrics: HeraldMetrics;
  store: Pick<SessionStore, 'getTurn'>;
}

/** The turn metrics policy (turn/pipeline.ts): counts and times one run of `run` by the outcome it returns. */
async function countTurn(deps: TurnMetricsDeps, ctx: TurnContext, run: () => Promise<TurnResult | void>): Promise<TurnResult | void> {
  const { metrics, store } = deps;
  const started = performance.now();
  let label: OutcomeLabel = 'error';
  let counted = true;
  let compressions = 0;
  try {
    const result = await run();
    const outcome = result?.outcome;
    // A recovered job whose turn had already finished is not a new turn.
    if (outcome?.kind === 'finished-before') counted = false;
    compressions = outcome?.compressions ?? 0;
    // The turn says how it went; only when it cannot tell (a failure path) is the outbox read.
    const known = outcome ? labelOfKind(outcome.kind) : undefined;
    label = known ?? (counted ? outcomeOf((await store.getTurn(ctx.turnId))?.status, ctx.signal) : 'error');
    return result;
  } catch (err) {
    if (err instanceof DeliveryError) {
      metrics.deliveryFailures.inc({ platform: ctx.entries[0]?.payload.platform ?? 'unknown' });
      label = 'failed';
    } else if (ctx.signal.aborted) {
      label = outcomeOf(undefined, ctx.signal);
    }
    throw err;
  } finally {
    if (counted) {
      metrics.turns.inc({ outcome: label });
      metrics.turnDuration.observe({ outcome: label }, (performance.now() - started) / 1000);
    }
    if (compressions > 0) metrics.compressions.inc({ reason: 'turn' }, compressions);
  }
}

/** The metrics policy's body, for the pipeline (turn/pipeline.ts): countTurn with its deps. */
export function turnMetrics(deps: TurnMetricsDeps): AroundTurn {
  return (ctx, run) => countTurn(deps, ctx, run);
}

/** `run` with its turns counted (countTurn). */
export function instrumentTurns(run: TurnRunner, deps: TurnMetricsDeps): TurnRunner {
  return (ctx) => countTurn(deps, ctx, () => run(ctx));
}

function labelOfKind(kind: TurnOutcomeKind): OutcomeLabel | undefined {
  return kind === 'finished-before' || kind === 'unknown' ? undefined : kind;
}

function outcomeOf(status: TurnStatus | undefined, signal: AbortSignal): OutcomeLabel {
  if (status === 'delivered') return 'delivered';
  if (status === 'failed') return 'failed';
  if (status === 'interrupted') return 'interrupted';
  const reason: unknown = signal.reason;
  // Shutdown or a lost lock: another worker runs the turn again; this run produced nothing.
  if (signal.aborted && reason instanceof TurnAbort && (reason.kind === 'shutdown' || reason.kind === 'lock_lost')) return 'abandoned';
  if (signal.aborted) return 'interrupted';
  return 'error';
}

/**
 * The same provider, timed and counted: requests by status, latency of successful ones, tokens by kind. A failed
 * request is logged too: the user only hears "the AI provider refused our credentials", the operator needs why.
 */
export function instrumentProvider(provider: Provider, metrics: HeraldMetrics, log: Logger): Provider {
  const labels = { provider: provider.name, model: provider.model };
  // The label sets of a successful request, made once: every request of every turn counts with them.
  const ok = { ...labels, status: 'ok' };
  const tokens = TOKEN_KINDS.map(([count, kind]) => ({ count, labels: { provider: provider.name, kind } }));
  return {
    name: provider.name,
    model: provider.model,
    apiMode: provider.apiMode,
    // Media decides between sending images and describing them from this: it must survive the wrapping.
    ...(provider.vision === undefined ? {} : { vision: provider.vision }),
    async complete(req) {
      const started = performance.now();
      try {
        const res = await provider.complete(req);
        metrics.llmRequests.inc(ok);
        metrics.llmLatency.observe(labels, (performance.now() - started) / 1000);
        for (const { count, labels } of tokens) if (res.usage[count] > 0) metrics.tokens.inc(labels, res.usage[count]);
        return res;
      } catch (err) {
        const status = err instanceof ProviderError ? err.kind : req.signal.aborted ? 'aborted' : 'unknown';
        metrics.llmRequests.inc({ ...labels, status });
        if (status !== 'aborted') {
          const httpStatus = err instanceof ProviderError ? err.status : undefined;
          log.warn({ ...labels, kind: status, httpStatus, error: err instanceof Error ? err.message : String(err) }, 'LLM request failed');
        }
        throw err;
      }
    },
  };
}

/** The agent runtime with every provider (primary and fallbacks) instrumented; null stays null. */
export function instrumentAgent(agent: AgentRuntime | null, metrics: HeraldMetrics, log: Logger): AgentRuntime | null {
  if (!agent) return null;
  return {
    ...agent,
    primary: instrumentProvider(agent.primary, metrics, log),
    fallbacks: agent.fallbacks.map((p) => instrumentProvider(p, metrics, log)),
  };
}
