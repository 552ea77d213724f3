import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../base/types.js';
import type { Tool, ToolContext } from '../tools/registry.js';
import { CANCELLED_RESULT, MAX_TOOL_RESULT_CHARS, executeToolCalls, prepareToolCalls, type RunBatchOptions } from './execute-tools.js';
import type { AgentEvent } from './types.js';

const call = (id: string, name: string, args = '{}'): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

function tool(name: string, execute: Tool['execute'], extra: Partial<Tool> = {}): Tool {
  return { name, description: name, parameters: { type: 'object' }, readOnly: true, execute, ...extra };
}

/** Counts how many executions are inside a tool at once; each one yields to the event loop a few times. */
function concurrencyProbe(): { peak: () => number; execute: Tool['execute'] } {
  let inside = 0;
  let peak = 0;
  return {
    peak: () => peak,
    execute: async (args) => {
      inside += 1;
      peak = Math.max(peak, inside);
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      inside -= 1;
      return `done ${String(args.n)}`;
    },
  };
}

function run(calls: ToolCall[], tools: Tool[], extra: Partial<RunBatchOptions> = {}) {
  const events: AgentEvent[] = [];
  const batch = prepareToolCalls(calls, new Map(tools.map((t) => [t.name, t])));
  const opts: RunBatchOptions = {
    signal: new AbortController().signal,
    emit: (e) => events.push(e),
    ...extra,
  };
  return { batch, events, results: executeToolCalls(batch, opts) };
}

describe('executeToolCalls', () => {
  it('runs read-only calls in parallel and appends results in call order, not finish order', async () => {
    const started: string[] = [];
    let release!: () => void;
    const allStarted = new Promise<void>((r) => (release = r));
    const slowFirst = tool('lookup', async (args) => {
      started.push(String(args.q));
      if (started.length === 3) release();
      await allStarted; // only returns once every call has started: proves they overlap
      if (args.q === 'a') await new Promise((r) => setTimeout(r, 5));
      return `result ${String(args.q)}`;
    });
    const { results } = run([call('1', 'lookup', '{"q":"a"}'), call('2', 'lookup', '{"q":"b"}'), call('3', 'lookup', '{"q":"c"}')], [slowFirst]);
    const messages = await results;
    expect(started).toEqual(['a', 'b', 'c']);
    expect(messages.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['1', 'result a'],
      ['2', 'result b'],
      ['3', 'result c'],
    ]);
  });

  it('never has more than 8 read-only tools in flight', async () => {
    const probe = concurrencyProbe();
    const calls = Array.from({ length: 12 }, (_, i) => call(`c${i}`, 'probe', JSON.stringify({ n: i })));
    const messages = await run(calls, [tool('probe', probe.execute)]).results;
    expect(probe.peak()).toBe(8);
    expect(messages.map((m) => m.content)).toEqual(calls.map((_, i) => `done ${i}`));
  });

  it('runs a batch with any writing tool one call at a time', async () => {
    const probe = concurrencyProbe();
    const tools = [tool('probe', probe.execute), tool('write', probe.execute, { readOnly: false })];
    await run([call('1', 'probe', '{"n":1}'), call('2', 'write', '{"n":2}'), call('3', 'probe', '{"n":3}')], tools).results;
    expect(probe.peak()).toBe(1);
  });

  it('runs a batch with an interactive tool one call at a time', async () => {
    const probe = concurrencyProbe();
    const tools = [tool('probe', probe.execute), tool('clarify', probe.execute, { interactive: true })];
    await run([call('1', 'probe', '{"n":1}'), call('2', 'clarify', '{"n":2}')], tools).results;
    expect(probe.peak()).toBe(1);
  });

  it('executes identical (name, arguments) calls once and answers every call', async () => {
    const seen: unknown[] = [];
    const t = tool('lookup', async (args) => {
      seen.push(args);
      return `found ${String(args.q)}`;
    });
    const { results } = run([call('1', 'lookup', '{"q":"a"}'), call('2', 'lookup', '{ "q" : "a" }'), call('3', 'lookup', '{"q":"b"}')], [t]);
    const messages = await results;
    expect(seen).toEqual([{ q: 'a' }, { q: 'b' }]);
    expect(messages.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['1', 'found a'],
      ['2', 'found a'],
      ['3', 'found b'],
    ]);
  });

  it('repairs near-miss names, answers unknown ones with the valid list, and reports them', async () => {
    const t = tool('web_search', async () => 'hits');
    const { batch, results } = run([call('1', 'WebSearch'), call('2', 'launch_rockets')], [t]);
    const messages = await results;
    expect(batch.calls.map((c) => c.function.name)).toEqual(['web_search', 'launch_rockets']);
    expect(batch.unknownNames).toEqual(['launch_rockets']);
    expect(messages[0].content).toBe('hits');
    expect(messages[1].content).toBe('Error: unknown tool "launch_rockets". Valid tools: web_search.');
  });

  it('treats empty arguments as {} and answers unparsable ones with an error, keeping history parseable', async () => {
    const seen: unknown[] = [];
    const t = tool('lookup', async (args) => {
      seen.push(args);
      return 'ok';
    });
    const { batch, results } = run([call('1', 'lookup', ''), call('2', 'lookup', '{"q": ')], [t]);
    const messages = await results;
    expect(seen).toEqual([{}]);
    expect(messages[1].content).toMatch(/^Error: the arguments for lookup are not valid JSON .*Received: \{"q": $/);
    expect(batch.calls.map((c) => c.function.arguments)).toEqual(['{}', '{}']);
  });

  it('passes the signal and the tool context, reports failures as error results, and emits start/end', async () => {
    const contexts: ToolContext[] = [];
    const tools = [
      tool('ctx', async (_args, ctx) => {
        contexts.push(ctx);
        return 'fine';
      }),
      tool('fails', async () => {
        throw new Error('disk full');
      }),
    ];
    const controller = new AbortController();
    const { results, events } = run([call('1', 'ctx'), call('2', 'fails')], tools, {
      signal: controller.signal,
      toolContext: { sessionId: 's1', signal: 'not this one' },
    });
    const messages = await results;
    expect(contexts[0].signal).toBe(controller.signal);
    expect(contexts[0].sessionId).toBe('s1');
    expect(messages[1].content).toBe('Error: fails failed: disk full');
    const ends = events.filter((e) => e.type === 'tool_end');
    expect(ends.map((e) => e.type === 'tool_end' && [e.id, e.name, e.ok, e.preview])).toEqual([
      ['1', 'ctx', true, 'fine'],
      ['2', 'fails', false, 'Error: fails failed: disk full'],
    ]);
    expect(events.filter((e) => e.type === 'tool_start')).toHaveLength(2);
  });

  it('cuts results over 100,000 characters with a note', async () => {
    const t = tool('big', async () => 'x'.repeat(MAX_TOOL_RESULT_CHARS + 500));
    const [message] = await run([call('1', 'big')], [t]).results;
    expect(message.content?.startsWith('x'.repeat(MAX_TOOL_RESULT_CHARS))).toBe(true);
    expect(message.content?.slice(MAX_TOOL_RESULT_CHARS)).toBe('\n\n[truncated: 500 more characters not shown]');
  });

  it('on interrupt, keeps finished results and answers the rest with "cancelled by user interrupt"', async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const tools = [
      tool(
        'first',
        async () => {
          ran.push('first');
          controller.abort();
          return 'first done';
        },
        { readOnly: false },
      ),
      tool(
        'second',
        async () => {
          ran.push('second');
          return 'second done';
        },
        { readOnly: false },
      ),
    ];
    const messages = await run([call('1', 'first'), call('2', 'second')], tools, { signal: controller.signal }).results;
    expect(ran).toEqual(['first']);
    expect(messages.map((m) => m.content)).toEqual(['first done', CANCELLED_RESULT]);
    expect(CANCELLED_RESULT).toContain('cancelled by user interrupt');
  });

  it('a tool that rejects because of the interrupt gets the cancelled result', async () => {
    const controller = new AbortController();
    const t = tool('waits', (_args, ctx) => {
      queueMicrotask(() => controller.abort());
      return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('AbortError'))));
    });
    const [message] = await run([call('1', 'waits')], [t], { signal: controller.signal }).results;
    expect(message.content).toBe(CANCELLED_RESULT);
  });

  it('gives calls without ids (or with repeated ids) unique ids so results pair up', async () => {
    const t = tool('lookup', async (args) => String(args.q));
    const { batch, results } = run([call('', 'lookup', '{"q":1}'), call('dup', 'lookup', '{"q":2}'), call('dup', 'lookup', '{"q":3}')], [t]);
    const ids = batch.calls.map((c) => c.id);
    expect(new Set(ids).size).toBe(3);
    expect((await results).map((m) => m.tool_call_id)).toEqual(ids);
  });
});
