/**
 * The turn's policies as one ordered list: the order the pipeline declares is the order they run in, and the
 * order matters to the user — a database outage in the middle of a turn is waited out and the turn runs again,
 * without the user being told it failed (user-facing errors sit inside the store-outage policy and rethrow to it),
 * while any other exception gets one short reply. A real SQLite store; a recording egress.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PlatformEgress } from '@herald/adapters';
import { StoreUnavailableError } from '@herald/agent-core';
import { useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import type { TurnContext } from '../queue/turn-context.js';
import type { TurnSpend } from '../features/budgets/meter.js';
import { WATCHDOG, composePolicies, turnPolicies, type TurnPolicy } from './pipeline.js';
import type { TurnDeps } from './stages/deps.js';
import { testTurnControls } from './test-support.js';
import { testConversationServices } from '../features/sessions/test-support.js';

const temp = useTempStores('sqlite');
const log = pino({ level: 'silent' });

function recordingEgress(sent: string[]): PlatformEgress {
  return {
    platform: 'telegram',
    maxMessageLength: 4096,
    typingRefreshMs: 4000,
    duplicateSafety: 'none',
    async send(_c: string, text: string) {
      sent.push(text);
      return { messageIds: [String(sent.length)] };
    },
    async edit() {},
    async typing() {},
    async react() {},
    voiceFormat: 'ogg_opus',
    async sendFile(): Promise<string> {
      throw new Error('this test sends no files');
    },
  } satisfies PlatformEgress;
}

async function setUp(turnId: string): Promise<{ deps: TurnDeps; ctx: TurnContext; sent: string[]; counted: Array<string | undefined> }> {
  const store = await temp.open();
  const key = 'agent:main:telegram:dm:5';
  const { session } = await store.getOrCreateSession(key, { source: 'telegram', userId: '5' });
  await store.beginTurn(turnId, session.id, 1);
  const sent: string[] = [];
  // What the metrics policy is told (turn/instrument.ts counts by it): the outcome the turn returned, once per turn.
  const counted: Array<string | undefined> = [];
  const countTurn: TurnDeps['countTurn'] = async (_ctx, run) => {
    const result = await run();
    counted.push(result?.outcome?.kind);
    return result;
  };
  // The policies use the store, egress, metrics, the team controls and the prep gate; the stages' services are not
  // reached by these tests.
  const conversation = testConversationServices(store);
  const deps = {
    store,
    conversation,
    ...testTurnControls(conversation),
    egress: () => recordingEgress(sent),
    onPossibleDuplicate: () => undefined,
    countTurn,
  } as unknown as TurnDeps;
  const payload = {
    platform: 'telegram',
    conversationId: 'telegram:5',
    userId: '5',
    text: 'hi',
    platformMessageId: '9',
  } as TurnContext['entries'][number]['payload'];
  const ctx: TurnContext = {
    sessionKey: key,
    entries: [{ id: turnId, seq: 1, payload } as TurnContext['entries'][number]],
    turnId,
    fence: 1,
    signal: new AbortController().signal,
    canDeliver: async () => true,
    deliveryCheck: async () => 'ok',
    takeSteerMessages: () => [],
    touch: () => undefined,
    log,
  };
  return { deps, ctx, sent, counted };
}

describe('the turn pipeline', () => {
  it('declares its policies in one list, outermost first, and runs them in that order', async () => {
    const { deps } = await setUp('p0');
    expect([WATCHDOG, ...turnPolicies(deps)].map((p) => p.name)).toEqual([
      'watchdog',
      'metrics',
      'store outage',
      'user-facing errors',
      'turn slot',
      'prep gate',
      'spend',
    ]);
    const seen: string[] = [];
    const traced = (name: string): TurnPolicy => ({
      name,
      why: 'test',
      around: async (s, next) => {
        seen.push(`${name} in`);
        try {
          return await next(s);
        } finally {
          seen.push(`${name} out`);
        }
      },
    });
    const run = composePolicies([traced('a'), traced('b')], async () => void seen.push('stages'));
    await run((await setUp('p1')).ctx);
    expect(seen).toEqual(['a in', 'b in', 'stages', 'b out', 'a out']);
  });

  it('a database outage mid-turn is waited out and the turn runs again with a spend of its own; the user hears no failure', async () => {
    const { deps, ctx, sent, counted } = await setUp('p2');
    const spends: TurnSpend[] = [];
    const run = composePolicies(turnPolicies(deps), async (scope) => {
      if (scope.spend) spends.push(scope.spend);
      if (spends.length === 1) throw new StoreUnavailableError('Connection terminated unexpectedly');
      return { outcome: { kind: 'delivered', compressions: 0 } };
    });
    const result = await run(ctx);
    expect(result?.outcome?.kind).toBe('delivered');
    expect(spends).toHaveLength(2);
    expect(spends[0]).not.toBe(spends[1]);
    expect(sent).toEqual([]);
    expect(counted).toEqual(['delivered']);
  });

  it('any other exception ends in one short reply, and the turn counts as failed', async () => {
    const { deps, ctx, sent, counted } = await setUp('p3');
    const run = composePolicies(turnPolicies(deps), async () => {
      throw new TypeError('a bug');
    });
    const result = await run(ctx);
    expect(result?.outcome?.kind).toBe('failed');
    expect(sent).toEqual(['⚠️ Something went wrong (TypeError). Please try again.']);
    expect(counted).toEqual(['failed']);
  });
});
