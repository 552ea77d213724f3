/**
 * The approval hook against real Redis and a real store: a re-run (another worker, after a crash) finds the open
 * request and the decision taken meanwhile instead of asking twice; "always" covers the session; where nobody can be
 * asked the call is refused and audited.
 */
import type { Tool, ToolCallInfo } from '@herald/agent-core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';
import { createLogger } from '../../support/logger.js';
import { openApprovalDesk, type ApprovalDesk } from './desk.js';
import { APPROVAL_TURN_CONTEXT, ApprovalGate, type ApprovalTurn } from './gate.js';
import { argumentMasker } from './mask.js';

const redis = new Redis('redis://127.0.0.1:6379');
const prefix = testPrefix('approvals');
const temp = useTempStores('sqlite');
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const deleteTool: Tool = {
  name: 'tickets__delete',
  description: 'd',
  parameters: { type: 'object' },
  readOnly: false,
  destructive: true,
  execute: async () => 'x',
};

async function setup(): Promise<{ desk: ApprovalDesk; gate: ApprovalGate }> {
  const desk = openApprovalDesk(redis, prefix, (await temp.open()).sql);
  const gate = new ApprovalGate({ desk, timeoutMs: 60_000, admins: [], mask: argumentMasker([]), log: createLogger({ level: 'silent' }), pollMs: 10 });
  return { desk, gate };
}

function turn(sessionId: string, asked: string[], extra: Partial<ApprovalTurn> = {}): ApprovalTurn {
  return {
    sessionId,
    sessionKey: `agent:main:telegram:dm:${sessionId}`,
    platform: 'telegram',
    conversationId: `telegram:${sessionId}`,
    chatId: sessionId,
    chatType: 'dm',
    userId: '42',
    policy: { tools: [], exempt: [] },
    cannotAsk: null,
    ask: async (text) => {
      asked.push(text);
      return null;
    },
    withdraw: async () => undefined,
    touch: () => undefined,
    ...extra,
  };
}

const callOf = (signal: AbortSignal, args: Record<string, unknown> = { id: 7 }): ToolCallInfo => ({
  id: 'c1',
  name: deleteTool.name,
  args,
  tool: deleteTool,
  signal,
  context: {},
});

/** The gate's approval hook on a call of `turn` (the turn comes in the call's tool context, as turn/tools.ts puts it). */
const before = (gate: ApprovalGate, turn: ApprovalTurn, call: ToolCallInfo) => gate.hooks[0].before?.({ ...call, context: { [APPROVAL_TURN_CONTEXT]: turn } });

describe('ApprovalGate', () => {
  it('a re-run finds the open request and the decision taken meanwhile: asked once, allowed', async () => {
    const { desk, gate } = await setup();
    const asked: string[] = [];
    const crashed = new AbortController();
    const first = before(gate, turn('s-rerun', asked), callOf(crashed.signal));
    await waitUntil(() => asked.length === 1);
    // The worker goes away (its turn is aborted): the request stays in Redis.
    crashed.abort(new Error('worker gone'));
    await expect(first).rejects.toThrow();
    expect((await desk.decide({ conversationId: 'telegram:s-rerun', platform: 'telegram', userId: '42', choice: 'once' })).status).toBe('decided');

    const verdict = await before(gate, turn('s-rerun', asked), callOf(new AbortController().signal));
    expect(verdict).toEqual({ action: 'allow' });
    expect(asked).toHaveLength(1);
    expect((await desk.audit.list({ sessionId: 's-rerun' })).map((r) => r.decision)).toEqual(['approved_once']);
    // Acted on: the same call later is a new question.
    expect(await desk.requests.latestOpen('telegram:s-rerun')).toBeNull();
  });

  it('a worker killed after the question went out but before its mark: a decision taken meanwhile is not asked again', async () => {
    const { desk, gate } = await setup();
    const asked: string[] = [];
    // The question reaches the chat, then the worker dies before it marks the request as sent.
    const dying = turn('s-unmarked', asked, {
      ask: async (text) => {
        asked.push(text);
        throw new Error('worker killed');
      },
    });
    await expect(before(gate, dying, callOf(new AbortController().signal))).rejects.toThrow('worker killed');
    expect((await desk.requests.get((await desk.requests.latestOpen('telegram:s-unmarked')) ?? ''))?.sent).toBeUndefined();
    expect((await desk.decide({ conversationId: 'telegram:s-unmarked', platform: 'telegram', userId: '42', choice: 'once' })).status).toBe('decided');

    expect(await before(gate, turn('s-unmarked', asked), callOf(new AbortController().signal))).toEqual({ action: 'allow' });
    expect(asked).toHaveLength(1);
  });

  it('someone else cannot decide in a DM; "always" lets the session run the tool unasked', async () => {
    const { desk, gate } = await setup();
    const asked: string[] = [];
    const waiting = before(gate, turn('s-always', asked), callOf(new AbortController().signal));
    await waitUntil(() => asked.length === 1);
    expect(asked[0]).toContain('tickets__delete');
    const other = await desk.decide({ conversationId: 'telegram:s-always', platform: 'telegram', userId: '99', choice: 'once' });
    expect(other.status).toBe('not_allowed');
    await desk.decide({ conversationId: 'telegram:s-always', platform: 'telegram', userId: '42', choice: 'session' });
    expect(await waiting).toEqual({ action: 'allow' });
    expect(await before(gate, turn('s-always', asked), callOf(new AbortController().signal, { id: 8 }))).toEqual({ action: 'allow' });
    expect(asked).toHaveLength(1);
  });

  it('where nobody can be asked the call is refused with a reason, and audited; a tool outside the policy runs unasked', async () => {
    const { desk, gate } = await setup();
    const asked: string[] = [];
    const verdict = await before(gate, turn('s-api', asked, { cannotAsk: 'api' }), callOf(new AbortController().signal));
    expect(verdict).toEqual({
      action: 'deny',
      result:
        "Error: tickets__delete needs a person's approval (its server marks it as destructive), and requests over the API cannot ask for it; it was not run.",
    });
    expect(asked).toEqual([]);
    expect((await desk.audit.list({ sessionId: 's-api' })).map((r) => [r.decision, r.decidedBy])).toEqual([['refused', 'policy']]);
    const scheduled = await before(gate, turn('s-sched', asked, { cannotAsk: 'scheduled' }), callOf(new AbortController().signal));
    expect(scheduled).toMatchObject({ action: 'deny', result: expect.stringContaining('a scheduled task has nobody to ask; it was not run.') });
    expect(asked).toEqual([]);
    const exempt = turn('s-api', asked, { policy: { tools: [], exempt: ['tickets__*'] } });
    expect(await before(gate, exempt, callOf(new AbortController().signal))).toEqual({ action: 'allow' });
  });
});

async function waitUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error('condition not met');
}
