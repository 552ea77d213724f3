import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { ProviderError } from '../providers/types.js';
import type { Tool } from '../tools/registry.js';
import { createAgent } from './agent.js';
import { IterationBudget } from './budget.js';
import { CANCELLED_RESULT } from './execute-tools.js';
import { FallbackState } from '../providers/fallback.js';
import {
  BUDGET_SUMMARY_PROMPT,
  CONTINUE_PROMPT,
  PARTIAL_BUDGET_EXHAUSTED,
  PARTIAL_OUTPUT_LIMIT,
  PARTIAL_THINKING_EXHAUSTED,
  PARTIAL_UNKNOWN_TOOLS,
  runConversation,
} from './run-conversation.js';
import { ScriptedProvider } from './scripted-provider.js';
import type { AgentEvent, ConversationOptions } from './types.js';

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 2 };
const SYSTEM = 'You are Herald.';

function lookupTool(log: string[] = [], extra: Partial<Tool> = {}): Tool {
  return {
    name: 'lookup',
    description: 'Look something up',
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
    readOnly: true,
    execute: async (args) => {
      log.push(String(args.q));
      return `answer for ${String(args.q)}`;
    },
    ...extra,
  };
}

function turn(provider: ScriptedProvider, extra: Partial<ConversationOptions> = {}) {
  const events: AgentEvent[] = [];
  const result = runConversation({
    userMessage: 'hello',
    history: [],
    systemPrompt: SYSTEM,
    provider,
    retry: FAST_RETRY,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { result, events };
}

const roles = (messages: ChatMessage[]) => messages.map((m) => m.role);
const statuses = (events: AgentEvent[]) => events.flatMap((e) => (e.type === 'status' ? [`${e.kind}: ${e.message}`] : []));

describe('runConversation: the happy paths', () => {
  it('answers a plain message, streams deltas, and reports usage and the prompt size', async () => {
    const provider = new ScriptedProvider().script({
      text: 'Hi there',
      usage: { input: 100, output: 5, cacheRead: 20, cacheWrite: 3 },
    });
    const { result, events } = turn(provider);
    const r = await result;
    expect(r).toMatchObject({ finalResponse: 'Hi there', completed: true, interrupted: false, apiCalls: 1 });
    expect(r.newMessages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'Hi there', finish_reason: 'stop' },
    ]);
    expect(r.usage).toEqual({ input: 100, output: 5, cacheRead: 20, cacheWrite: 3 });
    expect(r.lastPromptTokens).toBe(123);
    expect(r.model).toBe('scripted-model');
    expect(events.map((e) => e.type)).toEqual(['turn_start', 'step', 'text_delta', 'turn_end']);
    expect(events.at(-1)).toEqual({ type: 'turn_end', result: r });
  });

  it('an ephemeral system prompt (N2) goes after the system prompt of every request, the same bytes each time', async () => {
    const p = new ScriptedProvider().script({ toolCalls: [{ name: 'lookup', arguments: '{"q":"x"}' }] }, { text: 'done' });
    await runConversation({
      userMessage: 'hi',
      history: [],
      systemPrompt: SYSTEM,
      ephemeralSystemPrompt: 'Today: be brief.',
      provider: p,
      tools: [lookupTool()],
    });
    expect(p.calls.map((c) => c.systemPrompt)).toEqual([`${SYSTEM}\n\nToday: be brief.`, `${SYSTEM}\n\nToday: be brief.`]);
  });

  it('runs a tool, sends its result back, and persists the whole exchange', async () => {
    const log: string[] = [];
    const provider = new ScriptedProvider().script({ toolCalls: [{ id: 't1', name: 'lookup', arguments: '{"q":"weather"}' }] }, { text: 'It is sunny.' });
    const r = await turn(provider, { tools: [lookupTool(log)] }).result;
    expect(log).toEqual(['weather']);
    expect(r.finalResponse).toBe('It is sunny.');
    expect(roles(r.newMessages)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(r.newMessages[2]).toMatchObject({ tool_call_id: 't1', tool_name: 'lookup', content: 'answer for weather' });
    expect(provider.calls[1].messages.at(-1)).toMatchObject({ role: 'tool', content: 'answer for weather' });
    expect(provider.calls.every((c) => c.systemPrompt === SYSTEM)).toBe(true);
    expect(provider.calls[0].tools.map((t) => t.name)).toEqual(['lookup']);
  });

  it('sanitises the user message and repairs the stored history before the call', async () => {
    const provider = new ScriptedProvider().script({ text: 'ok' });
    const history: ChatMessage[] = [
      { role: 'user', content: 'earlier' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'x', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'tool', content: 'stray', tool_call_id: 'nope' },
    ];
    const r = await turn(provider, { history, userMessage: 'broken \uD83D emoji' }).result;
    expect(r.newMessages[0].content).toBe('broken \uFFFD emoji');
    const sent = provider.calls[0].messages;
    expect(sent.map((m) => [m.role, m.tool_call_id ?? null])).toEqual([
      ['user', null],
      ['assistant', null],
      ['tool', 'x'],
      ['user', null],
    ]);
  });

  it('leaves out a tool whose requirements are missing and says why', async () => {
    const provider = new ScriptedProvider().script({ text: 'ok' });
    const missingKey = { ...lookupTool(), name: 'web_search', requires: () => 'FIRECRAWL_API_KEY is not set' };
    const tools = [lookupTool(), missingKey];
    const { result, events } = turn(provider, { tools });
    await result;
    expect(provider.calls[0].tools.map((t) => t.name)).toEqual(['lookup']);
    expect(statuses(events)).toEqual(['info: tool web_search unavailable: FIRECRAWL_API_KEY is not set']);
  });

  it('appends steering messages after a tool batch as one user message', async () => {
    const provider = new ScriptedProvider().script({ toolCalls: [{ name: 'lookup', arguments: '{"q":"a"}' }] }, { text: 'Switched to metric.' });
    const pending = [['use metric', 'and be brief']];
    const r = await turn(provider, { tools: [lookupTool()], getSteerMessages: () => pending.shift() ?? [] }).result;
    expect(provider.calls[1].messages.at(-1)).toEqual({ role: 'user', content: 'use metric\n\nand be brief' });
    expect(roles(r.newMessages)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
  });

  it('Agent.chat keeps its own history across turns', async () => {
    const provider = new ScriptedProvider().script({ text: 'Nice to meet you, Ada.' }, { text: 'You are Ada.' });
    const agent = createAgent({ provider, systemPrompt: SYSTEM, retry: FAST_RETRY });
    expect(await agent.chat('I am Ada')).toBe('Nice to meet you, Ada.');
    expect(await agent.chat('Who am I?')).toBe('You are Ada.');
    expect(provider.calls[1].messages.map((m) => m.content)).toEqual(['I am Ada', 'Nice to meet you, Ada.', 'Who am I?']);
    expect(agent.history).toHaveLength(4);
  });
});

describe('runConversation: model mistakes', () => {
  it('an unknown tool gets an error result listing the valid tools, and the model recovers', async () => {
    const provider = new ScriptedProvider().script({ toolCalls: [{ name: 'launch_rockets', arguments: '{}' }] }, { text: 'Got it' });
    const r = await turn(provider, { tools: [lookupTool()] }).result;
    expect(r).toMatchObject({ finalResponse: 'Got it', apiCalls: 2, completed: true });
    expect(r.newMessages[2].content).toBe('Error: unknown tool "launch_rockets". Valid tools: lookup.');
  });

  it('the third response calling unknown tools ends the turn as partial', async () => {
    const provider = new ScriptedProvider().otherwise(() => ({
      toolCalls: [{ name: 'launch_rockets', arguments: '{}' }],
    }));
    const r = await turn(provider, { tools: [lookupTool()] }).result;
    expect(r).toMatchObject({ completed: false, partial: PARTIAL_UNKNOWN_TOOLS, apiCalls: 3 });
    expect(roles(r.newMessages)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
  });

  it('invalid JSON arguments are re-asked silently, without keeping the bad responses', async () => {
    const log: string[] = [];
    const provider = new ScriptedProvider().script(
      { toolCalls: [{ name: 'lookup', arguments: '{"q": "wea' }] },
      { toolCalls: [{ name: 'lookup', arguments: '{q: weather}' }] },
      { toolCalls: [{ name: 'lookup', arguments: '{"q":"weather"}' }] },
      { text: 'Sunny.' },
    );
    const r = await turn(provider, { tools: [lookupTool(log)] }).result;
    expect(log).toEqual(['weather']);
    expect(r).toMatchObject({ finalResponse: 'Sunny.', apiCalls: 4 });
    expect(roles(r.newMessages)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(provider.calls[2].messages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('after two silent retries, invalid JSON gets an error result instead', async () => {
    const log: string[] = [];
    const provider = new ScriptedProvider().script(
      { toolCalls: [{ name: 'lookup', arguments: '{' }] },
      { toolCalls: [{ name: 'lookup', arguments: '{' }] },
      { toolCalls: [{ name: 'lookup', arguments: '{' }] },
      { text: 'Sorry.' },
    );
    const r = await turn(provider, { tools: [lookupTool(log)] }).result;
    expect(log).toEqual([]);
    expect(r.apiCalls).toBe(4);
    expect(r.newMessages[2].content).toMatch(/^Error: the arguments for lookup are not valid JSON/);
  });

  it('joins a reply cut by the length limit across continuations', async () => {
    const provider = new ScriptedProvider().script({ text: 'Part 1 ', finish: 'length' }, { text: 'Part 2', finish: 'stop' });
    const r = await turn(provider).result;
    expect(r).toMatchObject({ finalResponse: 'Part 1 Part 2', completed: true, apiCalls: 2 });
    expect(provider.calls[1].messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Part 1 ' },
      { role: 'user', content: CONTINUE_PROMPT },
    ]);
    // The stored history reads as one reply.
    expect(r.newMessages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'Part 1 Part 2', finish_reason: 'stop' },
    ]);
  });

  it('stops after 3 continuations and keeps the text so far', async () => {
    const provider = new ScriptedProvider().otherwise(() => ({ text: 'more ', finish: 'length' }));
    const r = await turn(provider).result;
    expect(r).toMatchObject({ finalResponse: 'more more more more ', partial: PARTIAL_OUTPUT_LIMIT, apiCalls: 4 });
  });

  it('a length stop with only reasoning is a partial result: thinking budget exhausted', async () => {
    const provider = new ScriptedProvider().script({ reasoning: 'Let me think about this...', finish: 'length' });
    const r = await turn(provider).result;
    expect(r).toMatchObject({ finalResponse: '', completed: false, partial: PARTIAL_THINKING_EXHAUSTED });
    expect(r.newMessages).toEqual([{ role: 'user', content: 'hello' }]);
  });
});

describe('runConversation: iteration budget', () => {
  it('budget 3 with a model that always calls tools: 3 tool turns, then one toolless summary call', async () => {
    const log: string[] = [];
    let n = 0;
    const provider = new ScriptedProvider().otherwise((call) =>
      call.toolChoice === 'none' ? { text: 'I looked up 3 things.' } : { toolCalls: [{ name: 'lookup', arguments: JSON.stringify({ q: `q${++n}` }) }] },
    );
    const budget = new IterationBudget(3);
    const r = await turn(provider, { tools: [lookupTool(log)], budget }).result;
    expect(log).toEqual(['q1', 'q2', 'q3']);
    expect(r).toMatchObject({ finalResponse: 'I looked up 3 things.', partial: PARTIAL_BUDGET_EXHAUSTED, apiCalls: 4 });
    // The summary call keeps the tool schemas (history holds tool calls) but forbids calling them.
    expect(provider.calls.map((c) => [c.tools.length, c.toolChoice ?? 'auto'])).toEqual([
      [1, 'auto'],
      [1, 'auto'],
      [1, 'auto'],
      [1, 'none'],
    ]);
    expect(provider.calls[3].messages.at(-1)).toEqual({ role: 'user', content: BUDGET_SUMMARY_PROMPT });
    expect(budget.remaining).toBe(0);
    expect(r.newMessages.at(-1)).toMatchObject({ role: 'assistant', content: 'I looked up 3 things.' });
  });

  it('a budget shared with a parent only allows what is left', async () => {
    const budget = new IterationBudget(5);
    for (let i = 0; i < 4; i++) budget.consume();
    const provider = new ScriptedProvider().otherwise((call) =>
      call.toolChoice === 'none' ? { text: 'summary' } : { toolCalls: [{ name: 'lookup', arguments: '{"q":"x"}' }] },
    );
    const r = await turn(provider, { tools: [lookupTool()], budget }).result;
    expect(r.apiCalls).toBe(2);
    expect(r.finalResponse).toBe('summary');
  });
});

describe('runConversation: budget and context pressure', () => {
  it('past 70 % of the budget the last tool result carries a budget note (a warning past 90 %), never persisted', async () => {
    const provider = new ScriptedProvider().otherwise((call) =>
      call.toolChoice === 'none' ? { text: 'summary' } : { toolCalls: [{ name: 'lookup', arguments: '{"q":"x"}' }] },
    );
    const r = await turn(provider, { tools: [lookupTool()], budget: new IterationBudget(10) }).result;
    const lastOf = (i: number) => String(provider.calls[i].messages.at(-1)?.content);
    expect(lastOf(5)).toBe('answer for x');
    expect(lastOf(6)).toBe('answer for x\n\n[BUDGET: Iteration 7/10. 3 iterations left. Start consolidating your work.]');
    expect(lastOf(8)).toBe('answer for x\n\n[BUDGET WARNING: Iteration 9/10. Only 1 iteration(s) left. Provide your final response NOW.]');
    expect(r.newMessages.filter((m) => m.content?.includes('BUDGET'))).toEqual([]);
  });

  it('a prompt past 70 % of the context window adds a context note to the next call only', async () => {
    const provider = new ScriptedProvider().script(
      { toolCalls: [{ name: 'lookup', arguments: '{"q":"x"}' }], usage: { input: 800 } },
      { toolCalls: [{ name: 'lookup', arguments: '{"q":"y"}' }], usage: { input: 100 } },
      { text: 'done' },
    );
    const r = await turn(provider, { tools: [lookupTool()], compression: { contextWindow: 1000, thresholdRatio: 0.8 } }).result;
    expect(String(provider.calls[1].messages.at(-1)?.content)).toMatch(/^answer for x\n\n\[CONTEXT: 80% of the context window is used \(800\/1000 tokens\)/);
    expect(provider.calls[2].messages.at(-1)?.content).toBe('answer for y');
    expect(r.newMessages.some((m) => m.content?.includes('CONTEXT:'))).toBe(false);
  });
});

describe('runConversation: interrupts', () => {
  it('aborting mid-stream returns interrupted with nothing partial persisted', async () => {
    const controller = new AbortController();
    const provider = new ScriptedProvider().script({ text: 'I was say', hang: true });
    const events: AgentEvent[] = [];
    const r = await runConversation({
      userMessage: 'hello',
      history: [],
      systemPrompt: SYSTEM,
      provider,
      signal: controller.signal,
      onEvent: (e) => {
        events.push(e);
        if (e.type === 'text_delta') controller.abort();
      },
    });
    expect(r).toMatchObject({ interrupted: true, completed: false, finalResponse: '' });
    expect(r.newMessages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(events.some((e) => e.type === 'text_delta')).toBe(true);
  });

  it('aborting during tools keeps finished calls and their results, cancels the rest, and stops', async () => {
    const controller = new AbortController();
    const writer = (name: string, abort: boolean): Tool => ({
      name,
      description: name,
      parameters: { type: 'object' },
      readOnly: false,
      execute: async () => {
        if (abort) controller.abort();
        return `${name} done`;
      },
    });
    const provider = new ScriptedProvider().script({
      toolCalls: [
        { name: 'first', arguments: '{}' },
        { name: 'second', arguments: '{}' },
      ],
    });
    const tools = [writer('first', true), writer('second', false)];
    const r = await turn(provider, { tools, signal: controller.signal }).result;
    expect(r.interrupted).toBe(true);
    expect(r.apiCalls).toBe(1);
    expect(r.newMessages.slice(2).map((m) => m.content)).toEqual(['first done', CANCELLED_RESULT]);
  });

  it('an interrupt during a retry backoff ends the turn at once', async () => {
    const controller = new AbortController();
    const down = new ProviderError('server_error', 'down', { status: 500 });
    const provider = new ScriptedProvider().script({ error: down });
    const r = await turn(provider, {
      signal: controller.signal,
      retry: { baseDelayMs: 600_000, maxDelayMs: 600_000 },
      onEvent: (e) => {
        if (e.type === 'status' && e.kind === 'retry') controller.abort();
      },
    }).result;
    expect(r).toMatchObject({ interrupted: true, apiCalls: 1 });
  });
});

describe('runConversation: errors and fallback', () => {
  it('retries transient errors and announces each retry', async () => {
    const provider = new ScriptedProvider().script(
      { error: new ProviderError('server_error', '500', { status: 500 }) },
      { error: new ProviderError('overloaded', '529', { status: 529 }) },
      { text: 'finally' },
    );
    const { result, events } = turn(provider);
    expect(await result).toMatchObject({ finalResponse: 'finally', apiCalls: 3 });
    expect(statuses(events).map((s) => s.split(':')[0])).toEqual(['retry', 'retry']);
  });

  it('a 429 moves to the fallback at once; the next turn skips the primary until its cooldown ends', async () => {
    let now = 0;
    const state = new FallbackState({ now: () => now });
    const primary = new ScriptedProvider('primary-model');
    const fallback = new ScriptedProvider('fallback-model', 'anthropic');
    primary.script({ error: new ProviderError('rate_limit', 'slow down', { status: 429 }) });
    fallback.otherwise(() => ({ text: 'from fallback' }));
    primary.otherwise(() => ({ text: 'from primary' }));

    const first = turn(primary, { fallbacks: [fallback], fallbackState: state });
    expect(await first.result).toMatchObject({ finalResponse: 'from fallback', model: 'fallback-model', apiCalls: 2 });
    expect(statuses(first.events)).toEqual(['fallback: openai:primary-model failed (rate_limit); using anthropic:fallback-model']);

    now += 30_000;
    const second = turn(primary, { fallbacks: [fallback], fallbackState: state });
    expect((await second.result).finalResponse).toBe('from fallback');
    expect(primary.calls).toHaveLength(1);
    expect(statuses(second.events)[0]).toMatch(/^fallback: openai:primary-model is cooling down/);

    now += 30_000;
    expect((await turn(primary, { fallbacks: [fallback], fallbackState: state }).result).finalResponse).toBe('from primary');
  });

  it('auth and model_not_found fall back without retrying; exhausted retries fall back too', async () => {
    for (const kind of ['auth', 'model_not_found'] as const) {
      const primary = new ScriptedProvider('p').script({ error: new ProviderError(kind, kind) });
      const fallback = new ScriptedProvider('f').script({ text: 'ok' });
      expect(await turn(primary, { fallbacks: [fallback] }).result).toMatchObject({ finalResponse: 'ok', apiCalls: 2 });
    }
    const primary = new ScriptedProvider('p').otherwise(() => ({ error: new ProviderError('server_error', '500') }));
    const fallback = new ScriptedProvider('f').script({ text: 'ok' });
    expect(await turn(primary, { fallbacks: [fallback] }).result).toMatchObject({ finalResponse: 'ok', apiCalls: 5 });
  });

  it('a 429 on the last provider is waited out like any transient error', async () => {
    const provider = new ScriptedProvider().script({ error: new ProviderError('rate_limit', '429', { retryAfterMs: 1 }) }, { text: 'ok' });
    expect(await turn(provider).result).toMatchObject({ finalResponse: 'ok', apiCalls: 2 });
  });

  it('when every provider fails the turn ends as partial with the error kind', async () => {
    const badKey = new ProviderError('auth', 'bad key', { status: 401 });
    const provider = new ScriptedProvider().otherwise(() => ({ error: badKey }));
    const r = await turn(provider).result;
    expect(r).toMatchObject({ completed: false, partial: 'auth', error: { kind: 'auth', message: 'bad key' } });
    expect(r.newMessages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('a context overflow never falls back; without a handler the turn is partial with the kind', async () => {
    const primary = new ScriptedProvider('p').script({ error: new ProviderError('context_overflow', 'too long') });
    const fallback = new ScriptedProvider('f').script({ text: 'should not be asked' });
    const r = await turn(primary, { fallbacks: [fallback] }).result;
    expect(r).toMatchObject({ partial: 'context_overflow', error: { kind: 'context_overflow' } });
    expect(fallback.calls).toHaveLength(0);
  });

  it('onContextOverflow gets the messages, and the call is retried with the compressed ones', async () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'long ago' },
      { role: 'assistant', content: 'very long answer' },
    ];
    const provider = new ScriptedProvider().script({ error: new ProviderError('payload_too_large', '413', { status: 413 }) }, { text: 'fits now' });
    const seen: ChatMessage[][] = [];
    const { result, events } = turn(provider, {
      history,
      onContextOverflow: async (messages) => {
        seen.push(messages);
        return [{ role: 'user', content: '[summary of earlier turns]' }, messages.at(-1) as ChatMessage];
      },
    });
    const r = await result;
    expect(seen[0].map((m) => m.content)).toEqual(['long ago', 'very long answer', 'hello']);
    expect(provider.calls[1].messages.map((m) => m.content)).toEqual(['[summary of earlier turns]\n\nhello']);
    expect(r.finalResponse).toBe('fits now');
    expect(r.compactedHistory?.map((m) => m.content)).toEqual(['[summary of earlier turns]', 'hello', 'fits now']);
    expect(statuses(events)[0]).toMatch(/^compression: /);
  });

  it('gives up on compression after 3 attempts', async () => {
    const tooLong = new ProviderError('context_overflow', 'still');
    const provider = new ScriptedProvider().otherwise(() => ({ error: tooLong }));
    let attempts = 0;
    const r = await turn(provider, {
      onContextOverflow: async (messages) => {
        attempts += 1;
        return messages;
      },
    }).result;
    expect(attempts).toBe(3);
    expect(r.partial).toBe('context_overflow');
    expect(provider.calls).toHaveLength(4);
  });
});
