/**
 * The turn as an explicit pipeline: the policies around a turn, in order, in one list, and the turn's stages
 * (turn/run-turn.ts) at the centre. The order is data here, not nesting spread over files; each policy says why it
 * sits where it does. The worker's watchdog sits outside all of them (see WATCHDOG below).
 *
 *   watchdog (worker) → metrics → store outage → user-facing errors → turn slot → prep gate → spend → stages
 */
import type { TurnContext, TurnResult, TurnRunner } from '../queue/turn-context.js';
import { settlingAfter, TurnSpend } from '../features/budgets/turn-spend.js';
import { rideOutStoreOutage } from './store-patience.js';
import { answerFailure } from './user-errors.js';
import { inPrepGate, inTurnSlot } from './admission.js';
import { runTurnStages } from './run-turn.js';
import type { TurnDeps } from './stages/deps.js';

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
 * Outermost, and held by the worker (queue/watchdog.ts runWatched): it needs the job's abort controller and the
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
