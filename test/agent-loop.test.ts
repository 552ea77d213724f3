/**
 * Acceptance tests of the agent loop: the real providers (real OpenAI and Anthropic SDKs) against the local
 * protocol-faithful stand-ins, for both wire APIs.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FallbackState,
  IterationBudget,
  PARTIAL_BUDGET_EXHAUSTED,
  createProvider,
  runConversation,
  type AgentEvent,
  type ConversationOptions,
  type Provider,
  type ProviderName,
  type Tool,
} from '@herald/agent-core';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';

const API_KEY = 'test-key';
const SYSTEM = 'You are Herald, a helpful assistant.';
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 };

interface Timing {
  name: string;
  startedAt: number;
  endedAt: number;
}

/** A read-only tool that takes `delayMs` and records when it ran. */
function timedTool(name: string, delayMs: number, timings: Timing[]): Tool {
  return {
    name,
    description: `Look up ${name}`,
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
    readOnly: true,
    execute: async (args) => {
      const startedAt = performance.now();
      await new Promise((r) => setTimeout(r, delayMs));
      timings.push({ name, startedAt, endedAt: performance.now() });
      return `${name}: result for ${String(args.q)}`;
    },
  };
}

/** The tool-result ids of a recorded request, in the order they were sent, whatever the wire format. */
function sentToolResultIds(req: RecordedRequest): string[] {
  const messages = Array.isArray(req.body.messages) ? (req.body.messages as Record<string, unknown>[]) : [];
  return messages.flatMap((m) => {
    if (m.role === 'tool') return [String(m.tool_call_id)];
    if (!Array.isArray(m.content)) return [];
    return (m.content as Record<string, unknown>[]).filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
  });
}

const hasTools = (req: RecordedRequest): boolean => Array.isArray(req.body.tools) && req.body.tools.length > 0;
/** Tools offered and not forbidden by tool_choice none (OpenAI: 'none'; Anthropic: {type: 'none'}). */
const mayCallTools = (req: RecordedRequest): boolean => {
  const choice = req.body.tool_choice;
  const none = choice === 'none' || (typeof choice === 'object' && choice !== null && (choice as { type?: unknown }).type === 'none');
  return hasTools(req) && !none;
};

describe.each<ProviderName>(['openai', 'anthropic'])('agent loop over %s', (kind) => {
  const fakes: FakeLLM[] = [];

  async function startFake(): Promise<FakeLLM> {
    const start = kind === 'openai' ? startFakeOpenAI : startFakeAnthropic;
    const fake = await start({ apiKey: API_KEY });
    fakes.push(fake);
    return fake;
  }

  function providerFor(fake: FakeLLM, model = `${kind}-test-model`): Provider {
    return createProvider({ provider: kind, model, apiKey: API_KEY, baseUrl: fake.url });
  }

  function converse(provider: Provider, extra: Partial<ConversationOptions> = {}) {
    const events: AgentEvent[] = [];
    const result = runConversation({
      userMessage: 'What do you know?',
      history: [],
      systemPrompt: SYSTEM,
      provider,
      retry: FAST_RETRY,
      onEvent: (e) => events.push(e),
      ...extra,
    });
    return { result, events };
  }

  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });

  it('runs two read-only tool calls in parallel and appends their results in call order', async () => {
    const fake = await startFake();
    fake.script(
      {
        toolCalls: [
          { id: 'call_slow', name: 'slow_lookup', arguments: '{"q":"a"}' },
          { id: 'call_fast', name: 'fast_lookup', arguments: '{"q":"b"}' },
        ],
      },
      { text: 'Both done.' },
    );
    const timings: Timing[] = [];
    const tools = [timedTool('slow_lookup', 40, timings), timedTool('fast_lookup', 5, timings)];
    const r = await converse(providerFor(fake), { tools }).result;

    expect(r.finalResponse).toBe('Both done.');
    const slow = timings.find((t) => t.name === 'slow_lookup') as Timing;
    const fast = timings.find((t) => t.name === 'fast_lookup') as Timing;
    // Overlap: each started before the other ended. Run one after the other, one would start after the other ended.
    expect(fast.startedAt).toBeLessThan(slow.endedAt);
    expect(slow.startedAt).toBeLessThan(fast.endedAt);
    // The fast one finished first, yet results keep the order of the calls.
    expect(timings.map((t) => t.name)).toEqual(['fast_lookup', 'slow_lookup']);
    expect(r.newMessages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['slow_lookup: result for a', 'fast_lookup: result for b']);
    expect(sentToolResultIds(fake.requests[1])).toEqual(['call_slow', 'call_fast']);
  });

  it('answers an invalid tool name with an error result, then finishes with the model’s reply', async () => {
    const fake = await startFake();
    fake.script({ toolCalls: [{ name: 'summon_dragon', arguments: '{}' }] }, { text: 'Got it' });
    const timings: Timing[] = [];
    const r = await converse(providerFor(fake), { tools: [timedTool('lookup', 1, timings)] }).result;
    expect(r.finalResponse).toBe('Got it');
    expect(r.apiCalls).toBe(2);
    expect(fake.requests).toHaveLength(2);
    expect(timings).toEqual([]);
    expect(r.newMessages.find((m) => m.role === 'tool')?.content).toBe('Error: unknown tool "summon_dragon". Valid tools: lookup.');
  });

  it('continues a reply cut by the length limit and joins the parts', async () => {
    const fake = await startFake();
    fake.script({ text: 'Part 1 ', finish: 'length' }, { text: 'Part 2' });
    const r = await converse(providerFor(fake)).result;
    expect(r.finalResponse).toBe('Part 1 Part 2');
    expect(r.completed).toBe(true);
    expect(fake.requests).toHaveLength(2);
    expect(r.newMessages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What do you know?'],
      ['assistant', 'Part 1 Part 2'],
    ]);
  });

  it('executes identical calls in one response once: [a, a, b] → 2 executions', async () => {
    const fake = await startFake();
    fake.script(
      {
        toolCalls: [
          { id: 'c1', name: 'lookup', arguments: '{"q":"a"}' },
          { id: 'c2', name: 'lookup', arguments: '{"q":"a"}' },
          { id: 'c3', name: 'lookup', arguments: '{"q":"b"}' },
        ],
      },
      { text: 'Done.' },
    );
    const timings: Timing[] = [];
    const r = await converse(providerFor(fake), { tools: [timedTool('lookup', 1, timings)] }).result;
    expect(timings).toHaveLength(2);
    expect(r.newMessages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
      ['c1', 'lookup: result for a'],
      ['c2', 'lookup: result for a'],
      ['c3', 'lookup: result for b'],
    ]);
    expect(sentToolResultIds(fake.requests[1])).toEqual(['c1', 'c2', 'c3']);
  });

  it('falls back on a 429 and retries the primary only after its cooldown', async () => {
    const primaryFake = await startFake();
    const fallbackFake = await startFake();
    primaryFake.script({ error: { status: 429 } });
    primaryFake.respondWith(() => ({ text: 'from primary' }));
    fallbackFake.respondWith(() => ({ text: 'from fallback' }));
    let now = 1_000_000;
    const fallbackState = new FallbackState({ now: () => now });
    const primary = providerFor(primaryFake, 'primary-model');
    const fallbacks = [providerFor(fallbackFake, 'fallback-model')];

    const first = converse(primary, { fallbacks, fallbackState });
    const r1 = await first.result;
    expect(r1.finalResponse).toBe('from fallback');
    expect(primaryFake.requests).toHaveLength(1);
    const fallbackStatus = first.events.find((e) => e.type === 'status' && e.kind === 'fallback');
    expect(fallbackStatus).toMatchObject({
      message: `${kind}:primary-model failed (rate_limit); using ${kind}:fallback-model`,
    });

    now += 30_000; // still cooling down: the next turn starts on the fallback without asking the primary
    const r2 = await converse(primary, { fallbacks, fallbackState }).result;
    expect(r2.finalResponse).toBe('from fallback');
    expect(primaryFake.requests).toHaveLength(1);

    now += 31_000; // past the 60 s cooldown: the primary is back
    const r3 = await converse(primary, { fallbacks, fallbackState }).result;
    expect(r3.finalResponse).toBe('from primary');
    expect(primaryFake.requests).toHaveLength(2);
    expect(fallbackFake.requests).toHaveLength(2);
  });

  it('aborting mid-stream closes the connection and returns interrupted with nothing partial', async () => {
    const fake = await startFake();
    fake.script({ text: 'This answer streams very slowly and never finishes', chunkDelayMs: 30_000 });
    const controller = new AbortController();
    const { result, events } = converse(providerFor(fake), {
      signal: controller.signal,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'text_delta') controller.abort();
      },
    });
    const r = await result;
    expect(r.interrupted).toBe(true);
    expect(r.completed).toBe(false);
    expect(r.finalResponse).toBe('');
    expect(r.newMessages).toEqual([{ role: 'user', content: 'What do you know?' }]);
    expect(events.filter((e) => e.type === 'text_delta')).toHaveLength(1);
    await vi.waitFor(() => expect(fake.activeRequests()).toBe(0), { timeout: 5_000 });
    expect(fake.requests[0].aborted).toBe(true);
  });

  it('with a budget of 3 and a model that always calls tools: 3 tool turns, then one toolless summary', async () => {
    const fake = await startFake();
    let n = 0;
    fake.respondWith((req) =>
      mayCallTools(req)
        ? { toolCalls: [{ name: 'lookup', arguments: JSON.stringify({ q: `step ${++n}` }) }] }
        : { text: 'I looked up three things and ran out of steps.' },
    );
    const timings: Timing[] = [];
    const r = await converse(providerFor(fake), {
      tools: [timedTool('lookup', 1, timings)],
      budget: new IterationBudget(3),
    }).result;
    expect(timings).toHaveLength(3);
    // The summary call still describes the tools (Anthropic refuses tool blocks in history otherwise) but forbids them.
    expect(fake.requests.map(hasTools)).toEqual([true, true, true, true]);
    expect(fake.requests.map(mayCallTools)).toEqual([true, true, true, false]);
    expect(r.finalResponse).toBe('I looked up three things and ran out of steps.');
    expect(r.partial).toBe(PARTIAL_BUDGET_EXHAUSTED);
    expect(r.apiCalls).toBe(4);
  });
});
