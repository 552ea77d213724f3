/**
 * The metric wrappers around providers and turns: what an operator reads on /metrics (and in the log) after LLM
 * calls succeed or fail, and after turns are delivered, fail delivery, or are abandoned on shutdown. A scripted
 * in-process provider (our own Provider contract, no SDK) and a real SQLite store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ProviderError, SessionStore } from '@herald/agent-core';
import { ScriptedProvider } from '../../../../packages/agent-core/src/loop/scripted-provider.js';
import { TurnAbort, type TurnContext } from '../queue/worker.js';
import { DeliveryError } from '../out/send-reply.js';
import { instrumentProvider, instrumentTurns } from './instrument.js';
import { createHeraldMetrics, type HeraldMetrics } from '../support/ops/metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'herald-instrument-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sample(metrics: HeraldMetrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  // Histograms report their _count and _bucket samples under the histogram's name, each with its own metricName.
  const all = await metrics.registry.getMetricsAsJSON();
  const values = all.flatMap((m) => m.values.map((v) => ({ ...v, name: (v as { metricName?: string }).metricName ?? m.name })));
  return values.find((v) => v.name === name && Object.entries(labels).every(([k, want]) => v.labels[k] === want))?.value;
}

async function ctxFor(store: SessionStore, turnId: string, signal = new AbortController().signal): Promise<TurnContext> {
  const session = (await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram', userId: '1' })).session;
  await store.beginTurn(turnId, session.id, 1);
  const payload = { platform: 'telegram', text: 'hi' } as TurnContext['entries'][number]['payload'];
  return {
    sessionKey: 'agent:main:telegram:dm:1',
    entries: [{ id: turnId, seq: 1, payload } as TurnContext['entries'][number]],
    turnId,
    fence: 1,
    signal,
    canDeliver: async () => true,
    deliveryCheck: async () => 'ok',
    takeSteerMessages: () => [],
    touch: () => undefined,
    log: pino({ level: 'silent' }),
  };
}

describe('instrumentProvider', () => {
  it('counts requests by status, times the successful ones and adds up tokens by kind', async () => {
    const metrics = createHeraldMetrics({ defaultMetrics: false });
    const scripted = new ScriptedProvider('m1', 'anthropic').script(
      { text: 'hello', usage: { input: 100, output: 20, cacheRead: 50 } },
      { error: new ProviderError('rate_limit', '429 slow down', { status: 429 }) },
    );
    const logged: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
    const provider = instrumentProvider(scripted, metrics, log);
    expect([provider.name, provider.model, provider.apiMode]).toEqual(['anthropic', 'm1', 'chat_completions']);
    const req = { systemPrompt: '', messages: [{ role: 'user' as const, content: 'hi' }], tools: [], signal: new AbortController().signal };
    expect((await provider.complete(req)).message.content).toBe('hello');
    await expect(provider.complete(req)).rejects.toThrow('429 slow down');

    expect(await sample(metrics, 'herald_llm_requests_total', { provider: 'anthropic', model: 'm1', status: 'ok' })).toBe(1);
    expect(await sample(metrics, 'herald_llm_requests_total', { status: 'rate_limit' })).toBe(1);
    expect(await sample(metrics, 'herald_llm_request_duration_seconds_count', { provider: 'anthropic' })).toBe(1);
    expect(await sample(metrics, 'herald_llm_tokens_total', { kind: 'input' })).toBe(100);
    expect(await sample(metrics, 'herald_llm_tokens_total', { kind: 'output' })).toBe(20);
    expect(await sample(metrics, 'herald_llm_tokens_total', { kind: 'cache_read' })).toBe(50);
    expect(await sample(metrics, 'herald_llm_tokens_total', { kind: 'cache_write' })).toBeUndefined();
    // The failure is logged for the operator, with what the provider said.
    expect(logged).toEqual([
      expect.objectContaining({ msg: 'LLM request failed', provider: 'anthropic', model: 'm1', kind: 'rate_limit', httpStatus: 429, error: '429 slow down' }),
    ]);
  });
});

describe('instrumentTurns', () => {
  it('counts outcomes: reported by the turn, else read from the outbox: delivered, failed delivery (counted per platform), abandoned on shutdown', async () => {
    const metrics = createHeraldMetrics({ defaultMetrics: false });
    const store = await SessionStore.open(join(dir, 'turns.db'));
    try {
      const delivered = instrumentTurns(async (ctx) => void (await store.markDelivered(ctx.turnId, ['10'])), { metrics, store });
      await delivered(await ctxFor(store, 't1'));

      const undeliverable = instrumentTurns(
        async (ctx) => {
          await store.recordReply(ctx.turnId, 'an answer', 1);
          throw new DeliveryError('delivery failed: chat not found');
        },
        { metrics, store },
      );
      await expect(undeliverable(await ctxFor(store, 't2'))).rejects.toThrow(DeliveryError);

      const shutdown = new AbortController();
      shutdown.abort(new TurnAbort('shutdown'));
      await instrumentTurns(async () => undefined, { metrics, store })(await ctxFor(store, 't3', shutdown.signal));

      // A recovered job whose turn was already delivered is not a second turn (the runner finds that in the outbox).
      await instrumentTurns(async () => ({ outcome: { kind: 'finished-before', compressions: 0 } }), { metrics, store })(await ctxFor(store, 't1'));
      // A runner that reports its outcome is believed without a read of the outbox (t4's row still says running).
      await instrumentTurns(async () => ({ outcome: { kind: 'interrupted', compressions: 0 } }), { metrics, store })(await ctxFor(store, 't4'));

      expect(await sample(metrics, 'herald_turns_total', { outcome: 'delivered' })).toBe(1);
      expect(await sample(metrics, 'herald_turns_total', { outcome: 'failed' })).toBe(1);
      expect(await sample(metrics, 'herald_turns_total', { outcome: 'abandoned' })).toBe(1);
      expect(await sample(metrics, 'herald_turns_total', { outcome: 'interrupted' })).toBe(1);
      expect(await sample(metrics, 'herald_delivery_failures_total', { platform: 'telegram' })).toBe(1);
      expect(await sample(metrics, 'herald_turn_duration_seconds_count', { outcome: 'delivered' })).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describe('instrumentTurns: compressions', () => {
  it('counts the compressions a turn reports (it moved the conversation to a compressed child session), and none for an ordinary one', async () => {
    const metrics = createHeraldMetrics({ defaultMetrics: false });
    const store = await SessionStore.open(join(dir, 'compressions.db'));
    try {
      const plain = instrumentTurns(async (ctx) => void (await store.markDelivered(ctx.turnId, ['1'])), { metrics, store });
      await plain(await ctxFor(store, 'c1'));
      expect(await sample(metrics, 'herald_compressions_total', { reason: 'turn' })).toBeUndefined();

      const compressing = instrumentTurns(
        async (ctx) => {
          const parent = (await store.currentSession(ctx.sessionKey))!;
          await store.startNewSession(ctx.sessionKey, { source: 'telegram', userId: '1', parentSessionId: parent.id, endPreviousReason: 'compression' });
          await store.markDelivered(ctx.turnId, ['2']);
          return { outcome: { kind: 'delivered', compressions: 1 } };
        },
        { metrics, store },
      );
      await compressing(await ctxFor(store, 'c2'));
      expect(await sample(metrics, 'herald_compressions_total', { reason: 'turn' })).toBe(1);
    } finally {
      await store.close();
    }
  });
});
