/** The loop's compression triggers, through runConversation with an in-process scripted provider. */
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { ProviderError } from '../providers/types.js';
import type { Tool } from '../tools/registry.js';
import { runConversation } from '../loop/run-conversation.js';
import { ScriptedProvider, type RecordedCall, type ScriptStep } from '../loop/scripted-provider.js';
import type { AgentEvent, ConversationOptions } from '../loop/types.js';
import { SUMMARIZER_SYSTEM_PROMPT } from './summarize.js';
import { SUMMARY_PREFIX } from './summary-text.js';
import { forgetLearntContextWindows, learntContextWindow } from './windows.js';

afterEach(() => forgetLearntContextWindows());

const isSummaryCall = (call: RecordedCall) => call.systemPrompt === SUMMARIZER_SYSTEM_PROMPT;
const agentCalls = (p: ScriptedProvider) => p.calls.filter((c) => !isSummaryCall(c));
const summaryCalls = (p: ScriptedProvider) => p.calls.filter(isSummaryCall);
const sent = (call: RecordedCall) => call.messages.map((m) => m.content ?? '').join('\n');

/** Summary calls answer SUMMARY-OK; agent calls follow `agentSteps`, then answer 'final'. */
function provider(model: string, ...agentSteps: ScriptStep[]): ScriptedProvider {
  return new ScriptedProvider(model).otherwise((call) =>
    isSummaryCall(call) ? { text: 'SUMMARY-OK', usage: { input: 50, output: 7 } } : (agentSteps.shift() ?? { text: 'final' }),
  );
}

function history(n: number, chars: number): ChatMessage[] {
  return Array.from(
    { length: n },
    (_, i): ChatMessage => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `m${i} ${'z'.repeat(chars)}`,
    }),
  );
}

async function run(p: ScriptedProvider, extra: Partial<ConversationOptions>) {
  const events: AgentEvent[] = [];
  const result = await runConversation({
    userMessage: 'hello',
    history: [],
    systemPrompt: 'You are Herald.',
    provider: p,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
    onEvent: (e) => events.push(e),
    ...extra,
  });
  const statuses = events.flatMap((e) => (e.type === 'status' && e.kind === 'compression' ? [e.message] : []));
  return { result, statuses };
}

const lookup: Tool = {
  name: 'lookup',
  description: 'Look something up',
  parameters: { type: 'object', properties: {} },
  readOnly: true,
  execute: async () => 'the answer is 42',
};

describe('compression inside the agent loop', () => {
  it('the beforeCompress hook (the memory flush) runs once before a preflight compression, with what is about to be summarised', async () => {
    const p = provider('m-flush');
    const seen: number[] = [];
    const { result } = await run(p, {
      history: history(40, 500),
      compression: { contextWindow: 8_000, beforeCompress: async (messages) => void seen.push(messages.length) },
    });
    expect(seen).toEqual([41]);
    expect(result.finalResponse).toBe('final');
  });

  it('a short history past the threshold (nothing in the middle to summarise) costs no flush: before the first call nor after tool batches', async () => {
    // 6 big messages: over 50 % of the window, but all of them are head or protected tail.
    const p = provider(
      'm-short-big',
      { toolCalls: [{ name: 'lookup', arguments: '{}' }], usage: { input: 6_000 } },
      { toolCalls: [{ name: 'lookup', arguments: '{}' }], usage: { input: 6_100 } },
    );
    let flushes = 0;
    const { result } = await run(p, {
      history: history(6, 4_000),
      tools: [lookup],
      compression: { contextWindow: 8_000, beforeCompress: async () => void flushes++ },
    });
    expect(result.finalResponse).toBe('final');
    expect(summaryCalls(p)).toHaveLength(0);
    expect(flushes).toBe(0);
  });

  it('a failing beforeCompress hook does not stop the compression', async () => {
    const p = provider('m-flush-fails');
    const { result } = await run(p, {
      history: history(40, 500),
      compression: { contextWindow: 8_000, beforeCompress: async () => Promise.reject(new Error('flush provider down')) },
    });
    expect(p.calls.map(isSummaryCall)).toEqual([true, false]);
    expect(result.compactedHistory).toBeDefined();
  });

  it('preflight: a request over 50 % of the window is compressed before the first call; the turn reports the new history', async () => {
    const p = provider('m-preflight');
    const { result, statuses } = await run(p, { history: history(40, 500), compression: { contextWindow: 8_000 } });
    expect(p.calls.map(isSummaryCall)).toEqual([true, false]);
    const request = agentCalls(p)[0];
    expect(sent(request)).toContain('SUMMARY-OK');
    expect(sent(request)).toContain('m0 ');
    expect(sent(request)).not.toContain('m10 ');
    expect(sent(request)).toContain('m39 ');
    expect(result.finalResponse).toBe('final');
    const compacted = result.compactedHistory ?? [];
    expect(compacted.length).toBeLessThan(30);
    expect(compacted.filter((m) => m.content?.includes(SUMMARY_PREFIX))).toHaveLength(1);
    expect(compacted.slice(-2)).toEqual([{ role: 'user', content: 'hello' }, expect.objectContaining({ role: 'assistant', content: 'final' })]);
    expect(result.newMessages.map((m) => m.content)).toEqual(['hello', 'final']);
    expect(statuses[0]).toMatch(/^preflight: compressed 41 → \d+ messages/);
    // The summary call counts in the turn's totals.
    expect(result.apiCalls).toBe(2);
    expect(result.usage.output).toBeGreaterThanOrEqual(7);
  });

  it("a summary provider (the auxiliary model) writes the summary; the conversation model only answers; the window stays the conversation model's", async () => {
    const p = provider('m-main');
    const side = provider('m-side');
    const { result, statuses } = await run(p, { history: history(40, 500), compression: { contextWindow: 8_000, summaryProvider: side } });
    expect(summaryCalls(p)).toHaveLength(0);
    expect(summaryCalls(side)).toHaveLength(1);
    expect(agentCalls(side)).toHaveLength(0);
    expect(sent(agentCalls(p)[0]!)).toContain('SUMMARY-OK');
    expect(statuses[0]).toMatch(/window 8000 tokens/);
    expect(result.apiCalls).toBe(2);
  });

  it('preflight stops when another pass would not help (no loop, one summary call)', async () => {
    const p = provider('m-big-tail');
    const { result } = await run(p, { history: history(30, 3_000), compression: { contextWindow: 8_000 } });
    expect(summaryCalls(p)).toHaveLength(1);
    expect(result.finalResponse).toBe('final');
  });

  it('after a tool batch, real usage over the threshold compresses before the next call', async () => {
    const p = provider('m-after-tools', { toolCalls: [{ name: 'lookup', arguments: '{}' }], usage: { input: 4_500 } });
    const flushed: string[] = [];
    const beforeCompress = async (messages: readonly ChatMessage[]) => void flushed.push(String(messages.at(-1)?.content));
    const { result, statuses } = await run(p, { history: history(40, 100), tools: [lookup], compression: { contextWindow: 8_000, beforeCompress } });
    expect(p.calls.map(isSummaryCall)).toEqual([false, true, false]);
    // The flush saw the tool result the compression was about to fold in.
    expect(flushed).toEqual(['the answer is 42']);
    const second = agentCalls(p)[1];
    expect(sent(second)).toContain('SUMMARY-OK');
    expect(sent(second)).toContain('the answer is 42');
    expect(statuses[0]).toMatch(/^after tool results: compressed/);
    expect(result.compactedHistory?.slice(-4).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  describe('a fallback mid-call (the next model starts with a cold prompt cache)', () => {
    const rateLimited = () => new ProviderError('rate_limit', 'slow down', { status: 429, retryAfterMs: 30_000 });
    // Window 8,000: the threshold is 4,000 tokens, 85 % of it 3,400; preflight compresses from 4,000 only.
    const nearlyDue = history(28, 520);
    const farFromIt = history(12, 520);

    it('compresses a request past 85 % of the threshold before the fallback model gets it', async () => {
      const primary = provider('m-cold-primary', { error: rateLimited() });
      const fallback = provider('m-cold-fallback');
      const side = provider('m-cold-side');
      const { result, statuses } = await run(primary, {
        history: nearlyDue,
        fallbacks: [fallback],
        compression: { contextWindow: 8_000, summaryProvider: side },
      });
      // The primary got the whole request (preflight left it alone), the fallback the compressed one.
      expect(sent(agentCalls(primary)[0]!)).toContain('m5 ');
      expect(summaryCalls(side)).toHaveLength(1);
      const first = agentCalls(fallback)[0]!;
      expect(sent(first)).toContain('SUMMARY-OK');
      expect(sent(first)).not.toContain('m5 ');
      expect(statuses).toEqual([expect.stringMatching(/^the fallback model starts with a cold prompt cache: compressed 29 → \d+ messages/)]);
      expect(result.finalResponse).toBe('final');
      expect(result.compactedHistory?.filter((m) => m.content?.includes(SUMMARY_PREFIX))).toHaveLength(1);
    });

    it('leaves a request below that share as it is, and never compresses with a share of 0', async () => {
      for (const [h, share] of [
        [farFromIt, undefined],
        [nearlyDue, 0],
      ] as const) {
        const primary = provider('m-warm-primary', { error: rateLimited() });
        const fallback = provider('m-warm-fallback');
        const side = provider('m-warm-side');
        const compression = { contextWindow: 8_000, summaryProvider: side, ...(share === undefined ? {} : { coldCacheShare: share }) };
        const { result, statuses } = await run(primary, { history: [...h], fallbacks: [fallback], compression });
        expect(summaryCalls(side)).toHaveLength(0);
        expect(statuses).toEqual([]);
        expect(sent(agentCalls(fallback)[0]!)).toContain('m11 ');
        expect(result.compactedHistory).toBeUndefined();
      }
    });
  });

  it('a context-length error naming a limit: the limit is learnt for the model, the history compressed, the call retried', async () => {
    const overflow = new ProviderError('context_overflow', 'maximum context length is 6000 tokens', { status: 400, contextLimit: 6_000 });
    const p = provider('m-limit', { error: overflow });
    let flushes = 0;
    const { result, statuses } = await run(p, { history: history(40, 100), compression: { beforeCompress: async () => void flushes++ } });
    // Notes are saved before the overflow compression too.
    expect(flushes).toBe(1);
    expect(learntContextWindow(p)).toBe(6_000);
    expect(learntContextWindow('m-limit')).toBeUndefined(); // known on this provider, not for the name everywhere
    expect(p.calls.map(isSummaryCall)).toEqual([false, true, false]);
    expect(result.finalResponse).toBe('final');
    expect(statuses.some((s) => /context too large: compressed 41 → \d+ messages \(window 6000 tokens\)/.test(s))).toBe(true);
  });

  it('a 413 naming no limit steps the assumed window down (128K first) and retries', async () => {
    const tooLarge = new ProviderError('payload_too_large', '413 Request Entity Too Large', { status: 413 });
    const p = provider('gpt-4.1-mini', { error: tooLarge });
    const { result, statuses } = await run(p, { history: history(140, 4_000), compression: {} });
    expect(result.finalResponse).toBe('final');
    expect(statuses.some((s) => s.includes('(window 128000 tokens)'))).toBe(true);
    expect(learntContextWindow(p)).toBeUndefined();
  });

  it('the assumed window skips the steps that are not below the refused request', async () => {
    const tooLarge = new ProviderError('payload_too_large', '413 Request Entity Too Large', { status: 413 });
    const p = provider('gpt-4.1-mini', { error: tooLarge });
    const { result, statuses } = await run(p, { history: history(60, 400), compression: {} });
    expect(result.finalResponse).toBe('final');
    expect(statuses.some((s) => s.includes('(window 8000 tokens)'))).toBe(true);
  });

  it('when nothing can be compressed the turn ends as partial with the error — no crash, no retry loop', async () => {
    const tooLarge = new ProviderError('payload_too_large', '413 Request Entity Too Large', { status: 413 });
    const p = new ScriptedProvider('m-short').otherwise(() => ({ error: tooLarge }));
    const { result, statuses } = await run(p, { history: history(6, 100), compression: {} });
    expect(result).toMatchObject({ completed: false, partial: 'payload_too_large', error: { kind: 'payload_too_large' } });
    expect(p.calls).toHaveLength(1);
    expect(statuses.at(-1)).toMatch(/nothing left to compress/);
  });

  it('without the compression option the loop never compresses on its own', async () => {
    const p = provider('m-off');
    const { result } = await run(p, { history: history(40, 500) });
    expect(summaryCalls(p)).toHaveLength(0);
    expect(result.compactedHistory).toBeUndefined();
  });
});
