/**
 * The turn as an explicit pipeline, in one place: the policies around a turn, in order, in one list, and the turn's
 * stages, in order, at the centre (runTurnStages; each stage a named function with a typed input and output, in
 * turn/stages/ but for the deliver stage, a send and its outcome, here). The order is data here, not nesting spread over files; each policy says why it sits where it does. The
 * worker's watchdog sits outside all of them (see WATCHDOG below). The small policies are defined here too: the
 * store outage, the user-facing errors (their texts in user-errors.ts), the turn slot and the prep gate; the bigger
 * ones (metrics, spend) in their own modules.
 *
 *   watchdog (worker) → metrics → store outage → user-facing errors → turn slot → prep gate → spend → stages
 *
 *   stages: prepare (open → early answers → prepare → files-only answer) → run the loop (plan → run) → finish
 *   → record → deliver (here: deliverReply) → settle (→ review: every N turns, behind the delivered reply, never awaited)
 *
 * The outbox (`turns` table) makes a re-run after a crash safe: a turn already delivered is skipped, a turn whose
 * reply was recorded but not delivered is delivered without asking the LLM again, and messages are persisted
 * under the turn id so persisting the same turn twice writes each message once.
 */
import { FencedOutError, isTransientStoreError, type SessionStore } from '@herald/agent-core';
import type { PlatformEgress } from '@herald/adapters';
import pRetry from 'p-retry';
import type { TurnContext, TurnOutcomeKind, TurnResult, TurnRunner } from '../queue/turn-context.js';
import { settlingAfter, TurnSpend } from '../features/budgets/meter.js';
import { DeliveryError, deliver, sendReply, type CheckedReply, type SendOutcome } from '../out/send-reply.js';
import { TurnAbort } from '../queue/turn-abort.js';
import { STORE_PATIENCE_MS } from '../out/until-stored.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';
import { turnFailureReply } from './user-errors.js';
import type { PrepGate, TeamControls } from './team-controls.js';
import type { TurnDeps } from './stages/deps.js';
import { openTurn, type OpenTurn } from './stages/open.js';
import { answerFromFiles, answerWithoutModel, prepareTurn } from './stages/prepare.js';
import { planLoop, runLoop } from './stages/plan.js';
import { finishTurn } from './stages/finish.js';
import { recordTurn } from './stages/record.js';
import { settleAborted, settleTurn } from './stages/settle.js';

/** What a policy sees and passes on: the worker's context, and the turn's spend once the spend policy made it. */
interface TurnScope {
  ctx: TurnContext;
  /** Null outside the spend policy; each run of the stages gets a TurnSpend of its own. */
  spend: TurnSpend | null;
}

export type TurnStep = (scope: TurnScope) => Promise<TurnResult | void>;

export interface TurnPolicy {
  name: string;
  /** Why it sits where it does in the list. */
  why: string;
  around(scope: TurnScope, next: TurnStep): Promise<TurnResult | void>;
}

/**
 * Outermost, and held by the worker (queue/running-turn.ts runWatched): it needs the job's abort controller and the
 * abandon handler, and it must see a turn stuck anywhere — in a policy as much as in a stage — so nothing is
 * outside it. Listed here so the whole order reads in one place.
 */
export const WATCHDOG = {
  name: 'watchdog',
  why: 'aborts a turn without activity and abandons one that ignores the abort, wherever it is stuck; the worker holds it',
} as const;

/** The policies around a turn, outermost first. */
export function turnPolicies(deps: TurnDeps): TurnPolicy[] {
  const spendDeps = { store: deps.store, budgets: deps.controls.budgets };
  return [
    {
      name: 'metrics',
      why: 'counts and times the whole turn as the user lived it, waits for the store and for a slot included, and every exception',
      around: (s, next) => deps.countTurn(s.ctx, () => next(s)),
    },
    {
      name: 'store outage',
      why: 'the one turn-level retry owner of store failures: outside the user-facing errors, which rethrow store errors to it, so an outage is waited out and the turn runs again instead of telling the user it failed',
      around: (s, next) => rideOutStoreOutage(deps.store, s.ctx, () => next(s)),
    },
    {
      name: 'user-facing errors',
      why: 'any other exception ends in one short reply; outside admission, so a turn that failed while waiting for a slot is answered too',
      around: (s, next) => answerFailure(deps, s.ctx, () => next(s)),
    },
    {
      name: 'turn slot',
      why: "the profile's concurrent-turn limit; outside the prep gate, so a turn holding a prep place never waits for a slot",
      around: (s, next) => inTurnSlot(deps.controls, s.ctx, (ctx) => next({ ...s, ctx })),
    },
    {
      name: 'prep gate',
      why: 'a place among the turns preparing their first model request, given up at that request (ctx.prepared) or at the end',
      around: (s, next) => inPrepGate(deps.prepGate, s.ctx, (ctx) => next({ ...s, ctx })),
    },
    {
      name: 'spend',
      why: 'innermost: each run of the stages (a store-outage re-run included) gets its own TurnSpend, settled however that run ends',
      around: (s, next) => {
        const spend = new TurnSpend(spendDeps);
        return settlingAfter(spend, s.ctx.log, () => next({ ...s, spend }));
      },
    },
  ];
}

/** The one composition: `policies[0]` outermost, `core` at the centre. Built once; nothing is made per turn here. */
export function composePolicies(policies: readonly TurnPolicy[], core: TurnStep): TurnRunner {
  const run = policies.reduceRight<TurnStep>((next, policy) => (scope) => policy.around(scope, next), core);
  return (ctx) => run({ ctx, spend: null });
}

/** The turn runner the worker calls (inside its watchdog): the policies around the stages. */
export function createTurnRunner(deps: TurnDeps): TurnRunner {
  return composePolicies(turnPolicies(deps), (scope) => runTurnStages(deps, scope.ctx, spendOf(scope)));
}

function spendOf(scope: TurnScope): TurnSpend {
  if (!scope.spend) throw new Error('the spend policy must sit around the stages of a turn');
  return scope.spend;
}

/** One turn's stages, in order: the messages a worker took from a session's mailbox → the agent loop → the store → the platform. */
async function runTurnStages(deps: TurnDeps, ctx: TurnContext, spend: TurnSpend): Promise<TurnResult> {
  // Prepare: the session and the outbox row, then what can be answered without the model, then what the model needs.
  const open = await openTurn(deps, ctx);
  if (!open) return { outcome: { kind: 'finished-before', compressions: 0 } };
  const early = await answerWithoutModel(deps, open);
  if ('answer' in early) return deliverReply(open, { text: early.answer, compressions: 0 });
  const prepared = await prepareTurn(deps, open, early.agent, spend);
  const filesOnly = await answerFromFiles(deps, open, prepared, spend);
  if (filesOnly !== null) return deliverReply(open, { text: filesOnly, compressions: prepared.compressions });
  // Run the loop on one explicit plan.
  const plan = await planLoop(deps, open, prepared);
  const result = await runLoop(open, plan);
  if (ctx.signal.aborted) return settleAborted(deps, open, prepared, result, spend);
  // Finish, record, deliver, settle.
  const finished = await finishTurn(deps, open, prepared, plan, result);
  const recorded = await recordTurn(deps, open, prepared, result, finished, spend);
  const delivered = await deliverReply(open, {
    text: recorded.text,
    failed: Boolean(result.error),
    checked: { check: finished.check, recorded: recorded.turn },
    compressions: recorded.compressions,
  });
  return settleTurn(deps, open, { prepared, plan, result, finished, recorded, delivered });
}

/** What a send leaves the turn as: a stale reply was superseded (interrupted), a lost lock hands the turn over. */
const KIND_AFTER_SEND: Record<SendOutcome, TurnOutcomeKind> = {
  delivered: 'delivered',
  stale: 'interrupted',
  'lock lost': 'abandoned',
  'nothing to send': 'unknown',
};

interface DeliverInput {
  text: string;
  /** The reply is an error text: ⚠️ instead of ✅ on the user's message. */
  failed?: boolean;
  /** The delivery check made before the reply was recorded, and the row that record returned. */
  checked?: CheckedReply;
  /** Compressions so far (they go into the outcome). */
  compressions: number;
}

/**
 * The deliver stage: the recorded reply goes out (fenced, per chunk, out/send-reply.ts). What the send came to is
 * the turn's outcome so far; the reaction swap waits until the session is free again (TurnResult.afterAck).
 */
async function deliverReply(open: OpenTurn, input: DeliverInput): Promise<TurnResult> {
  const sent = await sendReply(open.target, input.text, input.checked);
  const outcome = { kind: KIND_AFTER_SEND[sent], compressions: input.compressions };
  if (sent !== 'delivered') {
    await open.live.close();
    return { afterAck: () => open.progress.clear(), outcome };
  }
  return { afterAck: () => open.progress.done(input.failed ?? false), outcome };
}

/**
 * The turn-level owner of a store failure (the store-outage policy): a turn that failed because
 * the database went away waits (holding its session, which could not move anyway) until the database answers again
 * and then runs again, instead of falling back to the queue: after an outage every conversation resumes within a
 * second or two. The outbox makes the re-run safe. Past `patienceMs`, or once the turn is aborted, the error goes
 * on; the worker then puts the job's wake-up off (queue/worker.ts) rather than spending one of BullMQ's attempts.
 */
export async function rideOutStoreOutage(
  store: Pick<SessionStore, 'ping'>,
  ctx: TurnContext,
  run: () => Promise<TurnResult | void>,
  patienceMs = STORE_PATIENCE_MS,
): Promise<TurnResult | void> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    try {
      return await run();
    } catch (err) {
      if (!isTransientStoreError(err) || ctx.signal.aborted || Date.now() >= deadline) throw err;
      ctx.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'store unavailable; the turn runs again once it answers');
      await pRetry(() => store.ping(), {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: 250,
        maxTimeout: 2_000,
        maxRetryTime: Math.max(deadline - Date.now(), 0),
        signal: ctx.signal,
        // Waiting for the database is not a hung turn: keep the watchdog away.
        onFailedAttempt: () => ctx.touch(),
      });
    }
  }
}

/** What the user-facing errors policy needs to answer a failed turn. */
interface FailureReplyDeps {
  store: SessionStore;
  egress: (platform: string, account?: string) => PlatformEgress;
  deliveryBaseDelayMs?: number;
}

/**
 * The user-facing errors policy (turn/pipeline.ts): an exception (a bug, a model that cannot be built) still ends
 * in one short reply instead of silence — unless the turn was stopped, interrupted or handed over (nothing may be
 * sent then), delivery itself failed (delivery already told the user), or the store is down: that error goes on to
 * the store-outage policy outside this one, which runs the turn again once the database answers.
 */
async function answerFailure(deps: FailureReplyDeps, ctx: TurnContext, run: () => Promise<TurnResult | void>): Promise<TurnResult | void> {
  try {
    return await run();
  } catch (err) {
    // A newer worker owns the turn now (this one lost the session, or the watchdog gave up on it): say nothing.
    if (err instanceof FencedOutError) {
      ctx.log.info('turn taken over by a newer worker; stopping without writing or sending');
      return;
    }
    // A store outage is not the turn's failure: the worker runs it again once the database answers.
    if (ctx.signal.aborted || err instanceof TurnAbort || err instanceof DeliveryError || isTransientStoreError(err)) throw err;
    ctx.log.error({ err }, 'turn failed; telling the user');
    return tellUser(deps, ctx, err);
  }
}

/** The short failure reply, delivered and recorded (the turn ends failed); never throws. */
async function tellUser(deps: FailureReplyDeps, ctx: TurnContext, err: unknown): Promise<TurnResult | void> {
  const last = ctx.entries[ctx.entries.length - 1].payload;
  try {
    if (!(await ctx.canDeliver())) return;
    const ids = await deliver(deps.egress(last.platform, last.account), last.conversationId, turnFailureReply(err), {
      replyTo: last.platformMessageId,
      baseDelayMs: deps.deliveryBaseDelayMs,
    });
    if (await deps.store.getTurn(ctx.turnId)) {
      await deps.store.markDelivered(ctx.turnId, ids);
      await deps.store.markTurn(ctx.turnId, 'failed', ctx.fence, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
      return { outcome: { kind: 'failed', compressions: 0 } };
    }
  } catch (notice) {
    ctx.log.warn({ err: notice }, 'could not tell the user the turn failed');
  }
}

/*
 * What a turn waits for before it runs: its profile's concurrent-turn slot (team controls), then a place among the
 * turns preparing their first model request (team-controls.ts PrepGate). Two policies, in that order.
 */
type Run = (ctx: TurnContext) => Promise<TurnResult | void>;

/** The profile's concurrent-turn limit: the turn waits for a slot (its watchdog sees the wait as activity). */
async function inTurnSlot(controls: TeamControls, ctx: TurnContext, run: Run): Promise<TurnResult | void> {
  const sem = controls.turnSlots(ctx.entries[0].payload.profile ?? DEFAULT_PROFILE);
  if (!sem) return run(ctx);
  const slot = await sem.acquire(ctx.signal, ctx.touch);
  try {
    return await run(ctx);
  } finally {
    await slot.release();
  }
}

/**
 * A place among the preparing turns, given up when the turn's first model request goes out (`ctx.prepared`) or
 * when the turn ends without one. Inside the turn slot, so a turn holding a place never waits for another turn.
 * Waiting in line counts as activity for the watchdog, as waiting for a turn slot does.
 */
export async function inPrepGate(gate: PrepGate, ctx: TurnContext, run: Run): Promise<TurnResult | void> {
  const release = await gate.enter(ctx.signal, ctx.touch);
  try {
    return await run({ ...ctx, prepared: release });
  } finally {
    release();
  }
}
